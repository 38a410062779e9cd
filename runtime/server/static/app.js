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
  waiting: null, // {taskId, question}
  busy: false,
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

function bubble(role, text, cls) {
  const el = document.createElement("div");
  el.className = "msg " + role + (cls ? " " + cls : "");
  el.textContent = text;
  $("chat").appendChild(el);
  $("chat").scrollTop = $("chat").scrollHeight;
  return el;
}

function showProgress(p) {
  $("progress").hidden = false;
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
  $("send").disabled = busy;
  $("cancel").disabled = !busy;
  $("pause").disabled = !busy;
  if (!busy) $("progress").hidden = true;
}

async function follow(res, running) {
  state.running = running;
  setBusy(true);
  let final = null;
  try {
    for await (const ev of sse(res)) {
      if (ev.id !== null) running.lastId = ev.id;
      if (ev.event === "message") { final = ev.data; break; }
      const taskId = ev.data.task_id;
      if (taskId && !running.taskId) running.taskId = taskId;
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
  } catch (err) {
    // The connection dropped (a reload, the network): the task goes on; reattach later.
    return;
  }
  store.removeItem("skillrt.running");
  state.running = null;
  setBusy(false);
  if (final) finish(running.bubble, final);
  refreshTasks();
}

function finish(el, msg) {
  el.classList.remove("streaming");
  el.textContent = msg.content;
  const meta = document.createElement("span");
  meta.className = "meta";
  meta.textContent = msg.state + (msg.task_id ? " · " + msg.task_id : "");
  el.appendChild(meta);
  if (msg.state === "ERROR" || msg.state === "CANCELLED") el.classList.add("error");
  if (msg.state === "WAITING_INPUT") {
    state.waiting = { taskId: msg.task_id, question: msg.content };
    $("question").hidden = false;
    $("question-text").textContent = msg.content;
  }
}

async function stream(path, body, running) {
  const res = await fetch(path, {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
    body: JSON.stringify(body),
  });
  if (!res.ok) {
    const data = await res.json().catch(() => ({}));
    if (res.status === 401) $("login").hidden = false;
    bubble("assistant", t("failed") + ": " + (data.detail || res.status), "error");
    running.bubble.remove();
    setBusy(false);
    return;
  }
  await follow(res, running);
}

async function send(text) {
  followUser(text);
  bubble("user", text);
  const running = { taskId: null, lastId: 0, text: "", bubble: bubble("assistant", t("working"), "streaming") };
  const waiting = state.waiting;
  state.waiting = null;
  $("question").hidden = true;
  if (waiting) {
    running.taskId = waiting.taskId;
    await stream("/v1/tasks/" + waiting.taskId + "/answer", { text }, running);
    return;
  }
  const context = { session_id: state.session };
  const file = $("current-file").value.trim();
  const selection = $("selection").value;
  if (file) context.current_file = file;
  if (selection.trim()) context.selected_text = selection;
  await stream("/v1/input", { text, context }, running);
}

async function reattach() {
  const saved = JSON.parse(store.getItem("skillrt.running") || "null");
  if (!saved || !state.token) return;
  const res = await fetch("/v1/tasks/" + saved.taskId + "/events", {
    headers: headers({ Accept: "text/event-stream", "Last-Event-ID": String(saved.lastId || 0) }),
  });
  if (!res.ok) { store.removeItem("skillrt.running"); return; }
  const note = bubble("assistant", t("reattached"), "note");
  note.classList.add("meta");
  const running = { taskId: saved.taskId, lastId: saved.lastId, text: saved.text || "", bubble: bubble("assistant", saved.text || t("working"), "streaming") };
  await follow(res, running);
}

// --- tasks ----------------------------------------------------------------------------------

async function control(method, path) {
  try { await api(method, path); } catch (err) { bubble("assistant", t("failed") + ": " + err.message, "error"); }
  refreshTasks();
}

async function resume(taskId) {
  const running = { taskId, lastId: 0, text: "", bubble: bubble("assistant", t("working"), "streaming") };
  await stream("/v1/tasks/" + taskId + "/resume", { session_id: state.session }, running);
}

async function refreshTasks() {
  if (!state.token) return;
  let tasks = [];
  try { tasks = await api("GET", "/v1/tasks"); } catch (err) { return; }
  const list = $("tasks");
  list.textContent = "";
  $("no-tasks").hidden = tasks.length > 0;
  for (const task of tasks) {
    const li = document.createElement("li");
    li.dataset.taskId = task.id;
    const head = document.createElement("div");
    head.innerHTML = '<span class="state"></span> <span class="muted"></span>';
    head.querySelector(".state").textContent = task.state;
    head.querySelector(".muted").textContent = (task.skill || "") + " · " + task.id.slice(0, 8);
    const desc = document.createElement("div");
    desc.textContent = task.question ? "? " + task.question : task.description;
    li.append(head, desc);
    const actions = document.createElement("div");
    actions.className = "actions";
    const add = (label, fn, cls) => {
      const b = document.createElement("button");
      b.type = "button"; b.className = "small " + (cls || ""); b.textContent = t(label);
      b.addEventListener("click", fn);
      actions.appendChild(b);
    };
    if (task.state === "PAUSED" || task.state === "ERROR") {
      add("resume", () => resume(task.id));
      add("abandon", () => control("DELETE", "/v1/tasks/" + task.id), "danger");
    } else if (task.state !== "WAITING_INPUT") {
      add("cancel", () => control("POST", "/v1/tasks/" + task.id + "/abort"), "danger");
    }
    li.appendChild(actions);
    list.appendChild(li);
  }
}

// --- wiring ---------------------------------------------------------------------------------

$("form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text || state.busy) return;
  $("text").value = "";
  send(text);
});
$("text").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("form").requestSubmit(); }
});
$("cancel").addEventListener("click", () => {
  if (state.running && state.running.taskId) control("POST", "/v1/tasks/" + state.running.taskId + "/abort");
});
$("pause").addEventListener("click", () => {
  if (state.running && state.running.taskId) control("POST", "/v1/tasks/" + state.running.taskId + "/pause");
});
$("lang").addEventListener("click", () => setLang(state.lang === "zh" ? "en" : "zh"));
$("save-token").addEventListener("click", () => {
  store.setItem("skillrt.token", $("token").value.trim());
  loadToken();
  start();
});

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
