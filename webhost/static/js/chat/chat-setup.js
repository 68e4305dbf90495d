// @ts-check
// What the chat shows before it can answer: how to add a model when none is configured
// ([data-testid="chat-setup"]), and the form for the person's own API key when the chosen model takes one
// (form[data-server-input][data-model="ID"] with [name="INPUT"] and [data-action="save"], contract §8).
// A key is sent once with inputs/set and never comes back to the page.

import { h } from "../html.js";
import { describeError } from "../rpc.js";

const EXAMPLE = `"webhost": {
  "chat": {
    "models": [
      {"id": "claude", "api": "anthropic", "model": "claude-sonnet-4-5", "apiKey": "\${ANTHROPIC_API_KEY}"},
      {"id": "local", "api": "openai", "model": "qwen3:8b", "baseUrl": "http://127.0.0.1:11434/v1"}
    ]
  }
}`;

export function setupNote() {
  return h("div", { class: "card chat-setup", dataset: { testid: "chat-setup" } },
    h("h3", { text: "No model is configured" }),
    h("p", { text: "The chat talks to your team's own model. An admin adds one under the \"webhost\" key of the configuration file, then restarts webhost:" }),
    h("pre", { class: "text-content json", tabIndex: 0, text: EXAMPLE }),
    h("p", { class: "muted", text: "\"openai\" is every Chat Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, a LiteLLM proxy); \"anthropic\" is the Messages API. docs/chat.md has every key. Everything else in webhost works without it." }));
}

/**
 * @param {{id: string, label?: string, keyInput: string}} model
 * @param {import("../rpc.js").RpcClient} rpc
 * @param {() => void} saved
 */
export function keyForm(model, rpc, saved) {
  const id = `chat-key-${model.id.replace(/[^\w-]/g, "_")}`;
  const input = h("input", { id, name: model.keyInput, type: "password", required: true, autocomplete: "new-password", spellcheck: "false" });
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "small primary", text: "Save", dataset: { action: "save" } });
  const form = h("form", { class: "card server-input chat-key", novalidate: true, dataset: { serverInput: "", model: model.id },
    "aria-label": `Your API key for ${model.label ?? model.id}` },
  h("label", { class: "field-label", for: id, text: `Your API key for ${model.label ?? model.id}` }),
  h("p", { class: "field-help", text: "It is kept encrypted in webhost's database, for you only, and never shown again." }),
  input, error, h("div", { class: "form-actions" }, save));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (!input.value) {
      error.textContent = "Enter the key.";
      error.hidden = false;
      return;
    }
    save.disabled = true;
    try {
      await rpc.request("inputs/set", { values: { [model.keyInput]: input.value } });
      input.value = "";
      saved();
    } catch (err) {
      error.textContent = describeError(err);
      error.hidden = false;
    } finally {
      save.disabled = false;
    }
  });
  return form;
}
