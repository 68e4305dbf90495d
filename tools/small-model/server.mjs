#!/usr/bin/env node
// An OpenAI-compatible Chat Completions server around a small local model (SmolLM2-135M-Instruct, run by
// node-llama-cpp's prebuilt llama.cpp on the CPU), for webhost's tests and demo. With tools, the output is held
// by a grammar to a tool call, streamed as `tool_calls` deltas; after a tool result it answers in text.
// It binds 127.0.0.1 only and reaches no network: the model is a local file, the binaries are npm's.
//
//   node tools/small-model/server.mjs --model PATH.gguf [--port 0] [--threads 1] [--check]
//
// Prints `small-model ready http://127.0.0.1:PORT/v1` once the model is loaded.
import http from "node:http";
import {randomBytes} from "node:crypto";
import {parseArgs} from "node:util";
import {getLlama, LlamaChat} from "node-llama-cpp";
import {chatHistory, forcedTools, requestTools, toolCallSchema, ToolCallSplitter, WireError} from "./wire.mjs";

const MODEL_ID = "smollm2-135m-instruct";
const {values: opts} = parseArgs({
    options: {
        model: {type: "string"},
        port: {type: "string", default: "0"},
        check: {type: "boolean", default: false},  // load the binary and the model, say so, exit
        // One thread: two spin-wait on each other, and on a machine busy with a browser and webhost (the tests, the
        // demo) that made generation 10-20 times slower than one.
        threads: {type: "string", default: "1"},
        context: {type: "string", default: "4096"},
        // Caps on what one answer may cost on a 2-core CPU; a request's max_tokens can only lower them.
        "max-text-tokens": {type: "string", default: "96"},
        "max-call-tokens": {type: "string", default: "256"},
    },
});
if (!opts.model) {
    console.error("small-model: --model PATH.gguf is required (scripts/install-small-model puts it in .cache/small-model/)");
    process.exit(2);
}

let llama, model, context;
try {
    // build "never" + skipDownload: the prebuilt binary npm installed, or an error; never fetch or compile.
    llama = await getLlama({
        gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true, progressLogs: false,
        logLevel: "error", maxThreads: Number(opts.threads),
    });
    model = await llama.loadModel({modelPath: opts.model});
    context = await model.createContext({contextSize: Number(opts.context)});
} catch (error) {
    console.error(`small-model: cannot load ${opts.model} with node-llama-cpp: ${error?.message ?? error}`);
    process.exit(1);
}
if (opts.check) {
    console.log(`small-model ok: ${llama.buildType} llama.cpp binary, ${opts.model} loaded`);
    process.exit(0);
}
const chat = new LlamaChat({contextSequence: context.getSequence()});
const grammars = new Map();  // schema text -> LlamaGrammar: the same tools come with every turn
let queue = Promise.resolve();  // one sequence: requests take turns

async function grammarFor(schema) {
    const key = JSON.stringify(schema);
    if (!grammars.has(key)) {
        if (grammars.size >= 32) grammars.delete(grammars.keys().next().value);
        grammars.set(key, await llama.createGrammarForJsonSchema(schema));
    }
    return grammars.get(key);
}

function promptTokens(history) {
    const {contextText} = chat.chatWrapper.generateContextState({chatHistory: [...history, {type: "model", response: []}]});
    return contextText.tokenize(model.tokenizer).length;
}

/** Runs one completion, giving each delta to `emit`; resolves to its finish_reason and usage. */
async function complete(body, emit, signal) {
    const tools = requestTools(body);
    const forced = forcedTools(body, tools);
    const history = chatHistory(body, tools);
    const requested = Number(body.max_completion_tokens ?? body.max_tokens) || Infinity;
    let completionTokens = 0;
    const common = {
        signal, stopOnAbortSignal: true, seed: body.seed,
        temperature: typeof body.temperature === "number" ? body.temperature : 0,
        onToken: (tokens) => { completionTokens += tokens.length; },
    };
    let finish;
    if (forced) {
        const splitter = new ToolCallSplitter();
        const id = `call_${randomBytes(12).toString("hex")}`;
        const send = (parts) => {
            for (const part of parts) {
                emit(part.name !== undefined
                    ? {tool_calls: [{index: 0, id, type: "function", function: {name: part.name, arguments: ""}}]}
                    : {tool_calls: [{index: 0, function: {arguments: part.fragment}}]});
            }
        };
        const result = await chat.generateResponse(history, {
            ...common, grammar: await grammarFor(toolCallSchema(forced)),
            maxTokens: Math.min(requested, Number(opts["max-call-tokens"])),
            onTextChunk: (text) => send(splitter.push(text)),
        });
        const whole = result.metadata.stopReason !== "maxTokens" && result.metadata.stopReason !== "abort";
        send(splitter.finish(whole));
        finish = whole && splitter.name !== null ? "tool_calls" : "length";
    } else {
        const result = await chat.generateResponse(history, {
            ...common, maxTokens: Math.min(requested, Number(opts["max-text-tokens"])),
            onTextChunk: (text) => emit({content: text}),
        });
        finish = result.metadata.stopReason === "maxTokens" ? "length" : "stop";
    }
    const prompt = promptTokens(history);
    return {finish, usage: {prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens}};
}

function sendJson(res, status, value) {
    res.writeHead(status, {"content-type": "application/json"});
    res.end(JSON.stringify(value));
}

function sendError(res, status, message, type = "invalid_request_error") {
    sendJson(res, status, {error: {message, type, param: null, code: null}});
}

async function readJson(req) {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (body && typeof body === "object" && !Array.isArray(body)) return body;
    } catch {
        // answered below
    }
    throw new WireError("the request body must be a JSON object");
}

async function chatCompletions(req, res) {
    const body = await readJson(req);
    const base = {id: `chatcmpl-${randomBytes(12).toString("hex")}`, created: Math.floor(Date.now() / 1000),
        model: typeof body.model === "string" ? body.model : MODEL_ID};
    const aborter = new AbortController();
    res.on("close", () => aborter.abort());
    const stream = body.stream === true;
    const collected = {role: "assistant", content: null, tool_calls: undefined};
    let started = false;
    const emit = (delta) => {
        if (!stream) {
            if (delta.content !== undefined) collected.content = (collected.content ?? "") + delta.content;
            for (const call of delta.tool_calls ?? []) {
                if (call.id) (collected.tool_calls ??= []).push({id: call.id, type: "function", function: {...call.function}});
                else collected.tool_calls.at(-1).function.arguments += call.function.arguments;
            }
            return;
        }
        if (!started) {
            res.writeHead(200, {"content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive"});
            delta = {role: "assistant", ...(delta.tool_calls ? {content: null} : {}), ...delta};
            started = true;
        }
        sse(res, {...base, object: "chat.completion.chunk", choices: [{index: 0, delta, finish_reason: null}]});
    };
    // Validate before queueing, so a bad request is answered at once with a 400.
    chatHistory(body, requestTools(body));
    forcedTools(body, requestTools(body));
    const turn = queue.then(() => (aborter.signal.aborted ? null : complete(body, emit, aborter.signal)));
    queue = turn.catch(() => undefined);
    const done = await turn;
    if (done === null || res.destroyed) return;
    if (!stream) {
        sendJson(res, 200, {...base, object: "chat.completion", usage: done.usage,
            choices: [{index: 0, message: collected, finish_reason: done.finish, logprobs: null}]});
        return;
    }
    if (!started) emit({content: ""});
    sse(res, {...base, object: "chat.completion.chunk", choices: [{index: 0, delta: {}, finish_reason: done.finish}]});
    if (body.stream_options?.include_usage) sse(res, {...base, object: "chat.completion.chunk", choices: [], usage: done.usage});
    res.end("data: [DONE]\n\n");
}

function sse(res, value) {
    res.write(`data: ${JSON.stringify(value)}\n\n`);
}

const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname.replace(/\/$/, "");
    if (req.method === "GET" && path === "/v1/models") {
        sendJson(res, 200, {object: "list", data: [{id: MODEL_ID, object: "model", created: 0, owned_by: "local"}]});
    } else if (req.method === "POST" && path === "/v1/chat/completions") {
        chatCompletions(req, res).catch((error) => {
            if (res.headersSent) {
                res.end(`data: ${JSON.stringify({error: {message: String(error?.message ?? error)}})}\n\n`);
            } else if (error instanceof WireError) {
                sendError(res, 400, error.message);
            } else {
                console.error("small-model:", error);
                sendError(res, 500, String(error?.message ?? error), "server_error");
            }
        });
    } else {
        sendError(res, 404, `no route ${req.method} ${path}`, "not_found");
    }
});
server.listen(Number(opts.port), "127.0.0.1", () => {
    console.log(`small-model ready http://127.0.0.1:${server.address().port}/v1`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
    process.on(signal, () => {
        server.close();
        process.exit(0);
    });
}
