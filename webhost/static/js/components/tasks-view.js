// @ts-check
// Tasks (tasks/list, tasks/get, tasks/cancel): the calls the person's servers run as tasks, newest first, with
// their status and its message, kept by the backend while the person's workspace is open (a reload shows them
// again), live through `tasks/changed`; Cancel while one runs, Result once it ended.
//
// Its selectors: [data-testid="tasks-view"]; one [data-task-id="ID"] per task with data-status, data-server and
// data-tool, its [data-testid="task-message"], [data-testid="task-progress"] (once the server reported progress), [data-task-action="cancel"] (while it runs) and
// [data-task-action="result"] (once ended), which shows [data-testid="task-result"] (or the error).

import { h, prettyJson, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";
import { resultText } from "./copy.js";

const TERMINAL = ["completed", "failed", "cancelled"];

export class TasksView {
  #rpc;
  #status = h("p", { class: "muted", role: "status", dataset: { testid: "tasks-status" } });
  #list = h("ol", { class: "tasks-list", "aria-label": "Tasks" });
  /** @type {Map<string, HTMLElement>} */
  #rows = new Map();
  el;

  /** @param {import("../rpc.js").RpcClient} rpc */
  constructor(rpc) {
    this.#rpc = rpc;
    this.el = h("article", { class: "view tasks-view", dataset: { testid: "tasks-view" } },
      h("header", { class: "view-head" },
        h("h2", { class: "view-title", text: "Tasks" }),
        h("p", { class: "view-sub muted", text: "Tool calls your servers run as tasks: they go on when you reload or close the page, and their results wait here." })),
      this.#status, this.#list);
    void this.refresh();
  }

  async refresh() {
    try {
      const r = await this.#rpc.request("tasks/list", {});
      const tasks = Array.isArray(r?.tasks) ? r.tasks : [];
      this.#rows.clear();
      replaceChildren(this.#list, tasks.map((/** @type {any} */ t) => this.#row(t)));
      this.#count();
    } catch (err) {
      this.#status.className = "inline-error";
      this.#status.textContent = `Could not list the tasks: ${describeError(err)}`;
    }
  }

  /**
   * A task moved (tasks/changed): a new one goes on top; a known one has its head, message and progress
   * drawn again in place, so its buttons (and what Result showed) stay put while it reports.
   * @param {any} task
   */
  update(task) {
    const old = this.#rows.get(String(task.id));
    const row = this.#row(task);
    if (!old) this.#list.prepend(row);
    else if (old.dataset.status === row.dataset.status) {
      for (const part of ["task-message", "task-progress"]) {
        const was = old.querySelector(`[data-testid="${part}"]`);
        const now = row.querySelector(`[data-testid="${part}"]`);
        if (was && now) was.replaceWith(now);
        else if (now) old.querySelector(".task-output")?.before(now);
        else was?.remove();
      }
      this.#rows.set(String(task.id), old);
    } else old.replaceWith(row);
    this.#count();
  }

  #count() {
    const rows = [...this.#rows.values()];
    const running = rows.filter((r) => !TERMINAL.includes(String(r.dataset.status))).length;
    this.#status.className = "muted";
    this.#status.textContent = rows.length ? `${rows.length} task${rows.length === 1 ? "" : "s"}, ${running} running.` : "No tasks yet.";
  }

  /** @param {any} task */
  #row(task) {
    const id = String(task.id);
    const status = String(task.status ?? "working");
    const ended = TERMINAL.includes(status);
    const out = h("div", { class: "task-output" });
    const cancel = ended ? null : h("button", { type: "button", class: "small", text: "Cancel", dataset: { taskAction: "cancel" } });
    cancel?.addEventListener("click", async () => {
      cancel.disabled = true;
      try {
        await this.#rpc.request("tasks/cancel", { id });
      } catch (err) {
        replaceChildren(out, h("p", { class: "inline-error", text: describeError(err) }));
        cancel.disabled = false;
      }
    });
    const show = ended && (task.hasResult || task.hasError)
      ? h("button", { type: "button", class: "small", text: "Result", dataset: { taskAction: "result" } }) : null;
    show?.addEventListener("click", async () => {
      try {
        const r = await this.#rpc.request("tasks/get", { id });
        const full = r?.task ?? {};
        replaceChildren(out, full.result
          ? h("div", { class: "task-result", dataset: { testid: "task-result" } },
            h("pre", { class: "text-content", text: resultText(full.result) || prettyJson(full.result) }))
          : h("p", { class: "inline-error", dataset: { testid: "task-result" }, text: String(full.error?.message ?? "The task failed.") }));
      } catch (err) {
        replaceChildren(out, h("p", { class: "inline-error", text: describeError(err) }));
      }
    });
    const p = task.progress;
    const progress = p && typeof p.progress === "number"
      ? h("p", { class: "muted small task-progress", dataset: { testid: "task-progress" } },
        typeof p.total === "number" && p.total > 0
          ? h("progress", { value: String(p.progress), max: String(p.total), "aria-label": `Progress of ${String(task.tool)}` })
          : null,
        ` ${p.progress}${typeof p.total === "number" ? ` of ${p.total}` : ""}${p.message ? `: ${p.message}` : ""}`)
      : null;
    const started = typeof task.startedAt === "number" ? new Date(task.startedAt * 1000).toLocaleTimeString() : "";
    const row = h("li", { class: `task-row st-${status}`, dataset: { taskId: id, status, server: String(task.server), tool: String(task.tool) } },
      h("div", { class: "task-head" },
        h("strong", { text: String(task.tool) }), h("span", { class: "muted", text: ` on ${String(task.server)}` }),
        h("span", { class: `status-pill st-${status}`, text: status }),
        h("span", { class: "muted small", text: started }),
        h("span", { class: "spacer" }), cancel, show),
      h("p", { class: "muted small", dataset: { testid: "task-message" }, text: String(task.statusMessage ?? "") }),
      progress, out);
    this.#rows.set(id, row);
    return row;
  }
}
