// The status page: renders the samples of /events (server-sent events), nothing else.
// Every value is set as text (never as HTML), and the board is an <img> whose URL changes
// only when the position does, so the browser fetches each picture once.
"use strict";

const number = new Intl.NumberFormat("en");
const cards = new Map();

function text(id, value) {
  document.getElementById(id).textContent = value;
}

function card(session) {
  let node = cards.get(session.sid);
  if (!node) {
    node = document.getElementById("card").content.firstElementChild.cloneNode(true);
    node.dataset.sid = session.sid;
    cards.set(session.sid, node);
  }
  return node;
}

function fill(node, s) {
  const set = (cls, value) => { node.querySelector("." + cls).textContent = value; };
  set("sid", s.sid);
  set("variant", s.variant);
  const state = node.querySelector(".state");
  state.textContent = s.state;
  state.className = "state " + s.state;
  set("depth", s.depth === null ? "–" : (s.seldepth ? `${s.depth}/${s.seldepth}` : String(s.depth)));
  set("score", s.score === null ? "–" : s.score);
  set("nps", number.format(s.nps));
  set("nodes", number.format(s.nodes));
  set("count", String(s.searches));
  set("pv", s.pv.length ? s.pv.join(" ") : "");
  set("fen", s.fen);
  const img = node.querySelector(".board img");
  if (img.getAttribute("src") !== s.board) {
    img.setAttribute("src", s.board);
  }
}

function render(sample) {
  text("service", sample.service);
  const ready = document.getElementById("ready");
  ready.textContent = sample.ready ? "ready" : "not ready";
  ready.className = "badge " + (sample.ready ? "ready" : "not-ready");
  text("readiness", sample.readiness);
  text("sessions-open", String(sample.sessions.length));
  text("total-nps", number.format(sample.nps));
  text("searches", number.format(sample.searches_finished));
  const fleet = document.getElementById("fleet");
  fleet.hidden = sample.fleet === null;
  if (sample.fleet !== null) {
    const f = sample.fleet;
    text("worker-id", f.worker);
    text("jobs-rate", f.jobs_per_s.toFixed(2));
    text("jobs-answered", number.format(f.jobs_answered));
    text("jobs-running", String(f.jobs_running));
    text("online-count", String(f.workers_online.length));
    const online = document.getElementById("online");
    online.replaceChildren(...f.workers_online.map((w) => {
      const span = document.createElement("span");
      span.className = "worker";
      span.textContent = w;
      return span;
    }));
  }
  const main = document.getElementById("cards");
  const seen = new Set();
  const ordered = [];
  for (const s of sample.sessions) {
    const node = card(s);
    fill(node, s);
    seen.add(s.sid);
    ordered.push(node);
  }
  for (const sid of [...cards.keys()]) {
    if (!seen.has(sid)) cards.delete(sid);
  }
  document.getElementById("empty").hidden = ordered.length > 0;
  main.replaceChildren(document.getElementById("empty"), ...ordered);
}

function connect() {
  const link = document.getElementById("link");
  const events = new EventSource("events");
  events.onopen = () => { link.className = "link live"; };
  events.onmessage = (event) => {
    link.className = "link live";
    render(JSON.parse(event.data));
  };
  events.onerror = () => {
    // EventSource reconnects by itself; a 401 (logged out) ends it: back to the login form.
    link.className = "link lost";
    if (events.readyState === EventSource.CLOSED) {
      setTimeout(() => window.location.reload(), 3000);
    }
  };
}

connect();
