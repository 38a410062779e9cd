#!/usr/bin/env node
// A blog tool talking to `skillrt serve`: plain Node >= 18, fetch only, SSE parsed by hand,
// no npm dependencies. It writes an article (showing progress), cancels a second task,
// pauses a third and resumes it.
//
//   SKILLRT_URL=http://127.0.0.1:8765 SKILLRT_TOKEN=... node blog-tool.mjs
//
// Without SKILLRT_TOKEN it reads .skillrt/serve-token in the current folder (the blog).

import { readFileSync } from "node:fs";

const BASE = (process.env.SKILLRT_URL || "http://127.0.0.1:8765").replace(/\/$/, "");
const TOKEN = process.env.SKILLRT_TOKEN || readFileSync(".skillrt/serve-token", "utf8").trim();
const SESSION = "blog-tool-" + process.pid;
const AUTH = { Authorization: `Bearer ${TOKEN}` };

async function api(method, path, body) {
  const res = await fetch(BASE + path, {
    method,
    headers: { ...AUTH, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${data.code}: ${data.detail}`);
  return data;
}

// Yields {id, event, data} for each SSE event of a response; ':' lines are keep-alives.
async function* readSSE(res) {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const ev = { id: null, event: "message", data: "" };
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") ev.data += (ev.data ? "\n" : "") + value;
        else if (field === "id") ev.id = Number(value);
        else if (field === "event") ev.event = value;
      }
      if (ev.data) yield { ...ev, data: JSON.parse(ev.data) };
    }
  }
}

// POST with Accept: text/event-stream; calls onEvent(ev) for each event (it may return a
// promise) and returns the final ChatMessage (the `message` event).
async function stream(path, body, onEvent = () => {}) {
  const res = await fetch(BASE + path, {
    method: "POST",
    headers: { ...AUTH, "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${(await res.json()).detail}`);
  for await (const ev of readSSE(res)) {
    if (ev.event === "message") return ev.data;
    await onEvent(ev);
  }
  throw new Error("the stream ended without a message");
}

function showProgress(ev) {
  if (ev.event !== "task:progress") return;
  const p = ev.data.data;
  const pct = p.percent ?? Math.round((100 * p.step) / p.total_steps);
  console.log(`  [${String(pct).padStart(3)}%] ${p.message}`);
}

const summary = {};

// 0. What the server offers.
const info = await api("GET", "/v1/info");
const skills = await api("GET", "/v1/skills");
console.log(`skillrt ${info.version} on ${info.model}; skills: ${skills.map((s) => s.name).join(", ")}`);
summary.skills = skills.length;

// 1. Write an article with the WriteArticle button, showing progress and streamed text.
console.log("1. writing an article");
let streamed = 0;
const article = await stream(
  "/v1/skills/WriteArticle/run",
  { params: { topic: "Rust ownership" }, session_id: SESSION },
  (ev) => {
    showProgress(ev);
    if (ev.event === "task:stream") streamed += ev.data.data.delta.length;
  },
);
console.log(`  ${article.state}: ${article.data.path} (${streamed} characters streamed)`);
summary.written = { state: article.state, path: article.data.path, streamed };

// 2. Start another article and cancel it as soon as its text starts to stream.
console.log("2. cancelling a task");
let cancelled = false;
const stopped = await stream(
  "/v1/input",
  { text: "write an article about Rust lifetimes", session_id: SESSION },
  async (ev) => {
    showProgress(ev);
    if (ev.event === "task:stream" && !cancelled) {
      cancelled = true;
      const r = await api("POST", `/v1/tasks/${ev.data.task_id}/abort`);
      console.log(`  abort sent: ${r.ok}`);
    }
  },
);
console.log(`  ${stopped.state}: ${stopped.content}`);
summary.cancelled = { state: stopped.state };

// 3. Start a third, pause it at its second step, then resume it from there.
console.log("3. pausing and resuming a task");
let pauseSent = false;
const paused = await stream(
  "/v1/input",
  { text: "write an article about Rust traits", session_id: SESSION },
  async (ev) => {
    showProgress(ev);
    if (ev.event === "task:progress" && ev.data.data.step >= 2 && !pauseSent) {
      pauseSent = true;
      await api("POST", `/v1/tasks/${ev.data.task_id}/pause`);
    }
  },
);
console.log(`  ${paused.state}: ${paused.content.split("\n")[0]}`);
const resumable = (await api("GET", "/v1/tasks")).filter((t) => t.state === "PAUSED");
console.log(`  resumable: ${resumable.map((t) => `${t.id} (${t.steps_done} steps done)`).join(", ")}`);
const resumed = await stream(`/v1/tasks/${paused.task_id}/resume`, { session_id: SESSION }, showProgress);
console.log(`  ${resumed.state}: ${resumed.data.path}`);
summary.resumed = { paused: paused.state, state: resumed.state, path: resumed.data.path };

console.log("SUMMARY " + JSON.stringify(summary));
