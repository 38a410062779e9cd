// skillrt's chat page: plain JavaScript, no build step, no CDN. It talks to the /v1 API with
// fetch and reads the SSE streams by hand (EventSource cannot send the bearer token).
"use strict";

const T = {
  en: {
    tasks: "Tasks", noTasks: "No running or resumable tasks.", pause: "Pause", cancel: "Cancel",
    answering: "Answering:", placeholder: "Write an article about Rust ownership…", send: "Send",
    context: "Current file and selection", file: "Current file", selection: "Selected text",
    token: "Token", save: "Save", tokenHelp: "skillrt serve printed it (or see .skillrt/serve-token).",
    resume: "Resume", abandon: "Abandon", attach: "Follow", working: "Working…",
    badToken: "The token was refused: paste the one skillrt serve printed.",
    reattached: "Reattached to the running task.", failed: "Request failed",
    queued: "queued: sent when the current reply ends",
    lost: "connection lost: a started task goes on; reload the page to follow it",
    lang: "中文",
  },
  zh: {
    tasks: "任务", noTasks: "没有运行中或可恢复的任务。", pause: "暂停", cancel: "取消",
    answering: "正在回答：", placeholder: "写一篇关于 Rust 所有权的文章…", send: "发送",
    context: "当前文件和选中文本", file: "当前文件", selection: "选中文本",
    token: "令牌", save: "保存", tokenHelp: "skillrt serve 启动时打印了它（也在 .skillrt/serve-token）。",
    resume: "恢复", abandon: "放弃", attach: "跟随", working: "处理中…",
    badToken: "令牌无效：请粘贴 skillrt serve 打印的令牌。",
    reattached: "已重新连接到正在运行的任务。", failed: "请求失败",
    queued: "排队中：当前回复结束后发送",
    lost: "连接已断开：已开始的任务仍在继续；重新加载页面即可跟随",
    lang: "English",
  },
};

const $ = (id) => document.getElementById(id);
const store = window.sessionStorage;
const state = {
  token: "",
  session: localStorage.getItem("skillrt.session") || "",
  lang: localStorage.getItem("skillrt.lang") || (navigator.language.startsWith("zh") ? "zh" : "en"),
  running: null, // {taskId, lastId, bubble, text}
  waiting: null, // {taskId, question}: the question the next input answers
  busy: false, // a call is running
  queue: [], // [{text, context, bubble}]: sent while busy, sent in order once it ends
  leaving: false, // the page is unloading: do not follow dropped streams again
};
if (!state.session) {
  state.session = "web-" + Math.random().toString(36).slice(2, 12);
  localStorage.setItem("skillrt.session", state.session);
}

function t(key) { return T[state.lang][key] || T.en[key] || key; }

function setLang(lang) {
  state.lang = lang;
  localStorage.setItem("skillrt.lang", lang);
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-placeholder]")) {
    el.placeholder = t(el.dataset.i18nPlaceholder);
  }
  $("lang").textContent = t("lang");
  refreshTasks();
}

// The user's language decides: text with Chinese characters switches the page to Chinese.
function followUser(text) {
  const han = (text.match(/[\u3400-\u9fff]/g) || []).length;
  const latin = (text.match(/[A-Za-z]/g) || []).length;
  if (han > 0 && han * 2 >= latin / 3) { if (state.lang !== "zh") setLang("zh"); }
  else if (latin > 0 && han === 0 && state.lang !== "en") setLang("en");
}

// --- the token ------------------------------------------------------------------------------

function loadToken() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    store.setItem("skillrt.token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search); // out of the address bar
  }
  state.token = store.getItem("skillrt.token") || "";
  $("login").hidden = Boolean(state.token);
}

function headers(extra) {
  return Object.assign({ Authorization: "Bearer " + state.token }, extra || {});
}

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: headers(body ? { "Content-Type": "application/json" } : {}),
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status === 401) { $("login").hidden = false; throw new Error(t("badToken")); }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.detail || res.status + "");
  return data;
}

// --- SSE, read by hand ----------------------------------------------------------------------

async function* sse(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const ev = { id: null, event: "message", data: "" };
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const name = line.slice(0, i);
        const value = line.slice(i + 1).replace(/^ /, "");
        if (name === "data") ev.data += (ev.data ? "\n" : "") + value;
        else if (name === "id") ev.id = Number(value);
        else if (name === "event") ev.event = value;
      }
      if (ev.data) yield { id: ev.id, event: ev.event, data: JSON.parse(ev.data) };
    }
  }
}

// --- the chat -------------------------------------------------------------------------------
//
// One call runs at a time (a request, an answer, a resume, a reattach). The page is busy from
// the moment a call starts; text sent while it is busy waits in a queue, shown in the chat,
// and goes out when the call ends: to the task's question when the call ended with one.

function bubble(role, text, cls) {
  const el = document.createElement("div");
  el.className = "msg " + role + (cls ? " " + cls : "");
  el.textContent = text;
  $("chat").appendChild(el);
  $("chat").scrollTop = $("chat").scrollHeight;
  return el;
}

function addMeta(el, text) {
  const meta = document.createElement("span");
  meta.className = "meta";
  meta.textContent = text;
  el.appendChild(meta);
}

function showProgress(p) {
  let pct = typeof p.percent === "number" ? p.percent : (p.total_steps ? (100 * p.step) / p.total_steps : 0);
  pct = Math.max(0, Math.min(100, pct));
  $("bar-fill").style.width = pct + "%";
  $("progress-text").textContent = Math.round(pct) + "% " + (p.message || "");
}

function remember() {
  const r = state.running;
  if (r && r.taskId) {
    store.setItem("skillrt.running", JSON.stringify({ taskId: r.taskId, lastId: r.lastId, text: r.text }));
  }
}

function setBusy(busy) {
  state.busy = busy;
  $("cancel").disabled = !busy;
  $("pause").disabled = !busy;
  $("progress").hidden = !busy;
  if (busy) { $("bar-fill").style.width = "0"; $("progress-text").textContent = t("working"); }
  for (const b of document.querySelectorAll("#tasks button.resume")) b.disabled = busy;
}

function showQuestion() {
  const w = state.waiting;
  $("question").hidden = !w || state.busy;
  $("question-text").textContent = w ? w.question : "";
}

function newRunning(taskId, text) {
  const running = { taskId, lastId: 0, text: text || "", pending: null, events: 0 };
  running.bubble = bubble("assistant", text || t("working"), "streaming");
  state.running = running;
  return running;
}

// Runs one call with the page busy; then sends what was queued meanwhile.
async function run(call) {
  setBusy(true);
  showQuestion();
  try { await call(); }
  catch (err) { bubble("assistant", t("failed") + ": " + err.message, "error"); }
  finally {
    state.running = null;
    setBusy(false);
    showQuestion();
    refreshTasks();
    const next = state.queue.shift();
    if (next) send(next.text, next);
  }
}

// One SSE response: updates the bubble; resolves to {final} (the ChatMessage) or {problem}.
async function read(res, running) {
  for await (const ev of sse(res)) {
    if (ev.id !== null) running.lastId = ev.id;
    if (ev.event === "message") return { final: ev.data };
    if (ev.event === "error") return { problem: ev.data };
    running.events += 1;
    const taskId = ev.data.task_id;
    if (taskId && !running.taskId) {
      running.taskId = taskId;
      if (running.pending) controlRunning(running.pending); // pressed before the task was known
      refreshTasks();
    }
    if (ev.event === "task:stream") {
      running.text += ev.data.data.delta;
      running.bubble.textContent = running.text;
      $("chat").scrollTop = $("chat").scrollHeight;
    } else if (ev.event === "task:progress") {
      showProgress(ev.data.data);
    } else if (ev.event === "ai:generation" && running.text && !running.text.endsWith("\n")) {
      running.text += "\n\n"; // one model call ended: the next one's text starts a paragraph
    }
    remember();
  }
  throw new Error("the stream ended early");
}

// Follows a call's stream; a dropped connection is followed again from the last event seen
// (the task goes on without us). {lost} when it cannot be reached again.
async function follow(res, running) {
  for (let attempt = 0; ; attempt++) {
    try { return await read(res, running); }
    catch (err) {
      if (state.leaving || !running.taskId || attempt >= 3) return { lost: err.message };
    }
    try {
      res = await fetch("/v1/tasks/" + running.taskId + "/events", {
        headers: headers({ Accept: "text/event-stream", "Last-Event-ID": String(running.lastId) }),
      });
    } catch (err) { return { lost: err.message }; }
    if (!res.ok) return { lost: String(res.status) };
  }
}

async function post(path, body, running) {
  let res;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify(body),
    });
  } catch (err) { return { problem: { detail: err.message } }; } // it did not reach the server
  if (!res.ok) {
    if (res.status === 401) $("login").hidden = false;
    const problem = await res.json().catch(() => ({}));
    return { problem: Object.assign({ status: res.status, detail: String(res.status) }, problem) };
  }
  return follow(res, running);
}

// Shows how a call ended in its bubble.
function settle(running, outcome) {
  const el = running.bubble;
  el.classList.remove("streaming");
  if (outcome.lost) {
    el.classList.add("error");
    addMeta(el, t("lost"));
    return; // the task may still run: the saved position lets a reload reattach
  }
  store.removeItem("skillrt.running");
  if (outcome.problem) {
    el.classList.add("error");
    el.textContent = t("failed") + ": " + (outcome.problem.detail || outcome.problem.status);
    return;
  }
  const msg = outcome.final;
  el.textContent = msg.content;
  addMeta(el, msg.state + (msg.task_id ? " · " + msg.task_id : ""));
  if (msg.state === "ERROR" || msg.state === "CANCELLED") el.classList.add("error");
  if (msg.state === "WAITING_INPUT") state.waiting = { taskId: msg.task_id, question: msg.content };
}

function context() {
  const ctx = { session_id: state.session };
  const file = $("current-file").value.trim();
  const selection = $("selection").value;
  if (file) ctx.current_file = file;
  if (selection.trim()) ctx.selected_text = selection;
  return ctx;
}

function queue(text) {
  const item = { text, context: context(), bubble: bubble("user", text, "queued") };
  addMeta(item.bubble, t("queued"));
  state.queue.push(item);
}

// Sends one chat input: the answer to the question shown, or a new request.
function send(text, queued) {
  return run(async () => {
    followUser(text);
    if (queued) { // out of the queue: to the bottom of the chat, where its reply comes
      queued.bubble.classList.remove("queued");
      queued.bubble.textContent = text;
      $("chat").appendChild(queued.bubble);
    } else bubble("user", text);
    const waiting = state.waiting;
    const running = newRunning(waiting ? waiting.taskId : null);
    if (!waiting && /^\/undo(\s|$)/.test(text)) { // POST /v1/undo: the last write, or a post's
      const path = text.slice(5).trim();
      const body = Object.assign({ language: state.lang === "zh" ? "zh" : "en" }, path ? { path } : {});
      let outcome;
      try { outcome = { final: await api("POST", "/v1/undo", body) }; }
      catch (err) { outcome = { problem: { detail: err.message } }; }
      settle(running, outcome);
      return;
    }
    if (!waiting) {
      settle(running, await post("/v1/input", { text, context: queued ? queued.context : context() }, running));
      return;
    }
    const outcome = await post("/v1/tasks/" + waiting.taskId + "/answer", { text }, running);
    const taken = outcome.final || (outcome.lost && running.events > 0);
    const gone = outcome.problem && [404, 409].includes(outcome.problem.status); // no question now
    if ((taken || gone) && state.waiting === waiting) state.waiting = null;
    settle(running, outcome);
  });
}

function reattach() {
  const saved = JSON.parse(store.getItem("skillrt.running") || "null");
  if (!saved || !state.token) return;
  run(async () => {
    const res = await fetch("/v1/tasks/" + saved.taskId + "/events", {
      headers: headers({ Accept: "text/event-stream", "Last-Event-ID": String(saved.lastId || 0) }),
    });
    if (!res.ok) { store.removeItem("skillrt.running"); return; }
    bubble("assistant", t("reattached"), "note meta");
    const running = newRunning(saved.taskId, saved.text);
    running.lastId = saved.lastId || 0;
    settle(running, await follow(res, running));
  });
}

// --- tasks ----------------------------------------------------------------------------------

async function control(method, path) {
  try { await api(method, path); } catch (err) { bubble("assistant", t("failed") + ": " + err.message, "error"); }
  refreshTasks();
}

// Pause or cancel the running call's task (once its id is known).
function controlRunning(verb) {
  const r = state.running;
  if (!r) return;
  if (!r.taskId) { r.pending = verb; return; }
  r.pending = null;
  control("POST", "/v1/tasks/" + r.taskId + "/" + verb);
}

function resume(taskId) {
  if (state.busy) return;
  run(async () => {
    const running = newRunning(taskId);
    settle(running, await post("/v1/tasks/" + taskId + "/resume", { session_id: state.session }, running));
  });
}

async function refreshTasks() {
  if (!state.token) return;
  const waiting = state.waiting;
  let tasks = [];
  try { tasks = await api("GET", "/v1/tasks"); } catch (err) { return; }
  const asks = tasks.some((task) => waiting && task.id === waiting.taskId && task.state === "WAITING_INPUT");
  if (waiting && !asks && !state.busy && state.waiting === waiting) { // gone: cancelled, say
    state.waiting = null;
    showQuestion();
  }
  const list = $("tasks");
  list.textContent = "";
  $("no-tasks").hidden = tasks.length > 0;
  for (const task of tasks) list.appendChild(taskItem(task));
}

function taskItem(task) {
  const li = document.createElement("li");
  li.dataset.taskId = task.id;
  li.dataset.state = task.state;
  const head = document.createElement("div");
  head.innerHTML = '<span class="state"></span> <span class="muted"></span>';
  head.querySelector(".state").textContent = task.state;
  head.querySelector(".muted").textContent = (task.skill || "") + " · " + task.id.slice(0, 8);
  const desc = document.createElement("div");
  desc.textContent = task.question ? "? " + task.question : task.description;
  li.append(head, desc);
  const actions = document.createElement("div");
  actions.className = "actions";
  const add = (label, fn, danger) => {
    const b = document.createElement("button");
    b.type = "button"; b.className = "small " + label + (danger ? " danger" : ""); b.textContent = t(label);
    b.addEventListener("click", fn);
    actions.appendChild(b);
    return b;
  };
  if (task.state === "PAUSED" || task.state === "ERROR") {
    add("resume", () => resume(task.id)).disabled = state.busy;
    add("abandon", () => control("DELETE", "/v1/tasks/" + task.id), true);
  } else if (task.state !== "WAITING_INPUT") {
    add("cancel", () => control("POST", "/v1/tasks/" + task.id + "/abort"), true);
  }
  li.appendChild(actions);
  return li;
}

// --- wiring ---------------------------------------------------------------------------------

$("form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  if (state.busy) queue(text);
  else send(text);
});
$("text").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("form").requestSubmit(); }
});
$("cancel").addEventListener("click", () => controlRunning("abort"));
$("pause").addEventListener("click", () => controlRunning("pause"));
$("lang").addEventListener("click", () => setLang(state.lang === "zh" ? "en" : "zh"));
$("save-token").addEventListener("click", () => {
  store.setItem("skillrt.token", $("token").value.trim());
  loadToken();
  start();
});
for (const name of ["beforeunload", "pagehide"]) window.addEventListener(name, () => { state.leaving = true; });

async function start() {
  if (!state.token) return;
  try {
    const info = await api("GET", "/v1/info");
    $("info").textContent = info.model + " · " + info.content_root;
  } catch (err) { return; }
  refreshTasks();
  reattach();
}

loadToken();
setLang(state.lang);
setBusy(false);
start();
setInterval(refreshTasks, 5000);
