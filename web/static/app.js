// resque-go dashboard: live overview by server-sent events. Everything
// from Redis goes into the page as text (textContent), never as HTML.
"use strict";
// the Failed page: one box ticks every entry of the page (without script
// the box stays hidden and each entry is ticked by hand)
(function () {
  var all = document.getElementById("select-page");
  if (!all) return;
  var boxes = document.querySelectorAll('#failed input[name="entry"]');
  all.hidden = false;
  all.addEventListener("change", function () { boxes.forEach(function (b) { b.checked = all.checked; }); });
})();
(function () {
  var base = document.body.dataset.base || "/";
  if (!document.getElementById("live-time")) return;

  function secs(s) {
    if (s === null || s === undefined) return "\u2014";
    s = Math.max(0, s);
    var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    if (d) return d + "d " + h + "h";
    if (h) return h + "h " + m + "m";
    if (m) return m + "m " + (s % 60) + "s";
    return s + "s";
  }
  function bytes(n) {
    if (n < 1024) return n + " B";
    var u = "KMGTPE", i = -1;
    do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
    return n.toFixed(1) + " " + u[i] + "iB";
  }
  // the page's message catalogue for the texts written here (render.go)
  var messages = {};
  try { messages = JSON.parse(document.body.dataset.messages || "{}"); } catch (e) { messages = {}; }
  function msg(s) { return messages[s] || s; }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(cells) {
    var tr = document.createElement("tr");
    cells.forEach(function (c) { var td = document.createElement("td"); if (c.cls) td.className = c.cls; (c.nodes || []).forEach(function (n) { td.appendChild(n); }); tr.appendChild(td); });
    return tr;
  }
  function fill(id, items, empty, cols, make) {
    var body = document.querySelector("#" + id + " tbody");
    if (!body) return;
    var rows = items.length ? items.map(make) : [row([{ nodes: [el("span", empty, "muted")] }])];
    if (!items.length) rows[0].firstChild.colSpan = cols;
    body.replaceChildren.apply(body, rows);
  }
  function update(v) {
    var err = document.getElementById("live-error");
    err.textContent = v.error || "";
    err.classList.toggle("hidden", !v.error);
    var t = new Date(v.time);
    var lt = document.getElementById("live-time");
    lt.textContent = t.toISOString().slice(11, 19) + " UTC";
    lt.setAttribute("datetime", v.time);
    document.querySelectorAll("[data-stat]").forEach(function (e) {
      var k = e.dataset.stat;
      if (v.stats && k in v.stats) e.textContent = String(v.stats[k]);
    });
    fill("queues", v.queues || [], msg("no queues"), 3, function (q) {
      var a = el("a", q.name);
      a.href = base + "queues/" + encodeURIComponent(q.name);
      return row([{ nodes: [a] }, { nodes: [el("span", q.size)], cls: "num" }, { nodes: [el("span", secs(q.age_seconds))] }]);
    });
    fill("workers", v.workers || [], msg("no workers"), 5, function (w) {
      var job = w.job ? [el("span", w.job.class, "mono"), document.createTextNode(" "), el("span", msg("on") + " " + w.job.queue, "muted")] : [el("span", msg("idle"), "muted")];
      return row([{ nodes: [el("span", w.id)], cls: "mono" }, { nodes: [el("span", w.runtime || "?")] }, { nodes: [el("span", (w.queues || []).join(", "))] }, { nodes: job },
        { nodes: [el("span", w.job ? secs(w.running_seconds) : "")] }]);
    });
    fill("processes", v.processes || [], msg("no resque-go processes"), 7, function (p) {
      return row([{ nodes: [el("span", p.host)] }, { nodes: [el("span", p.pid)], cls: "num" }, { nodes: [el("span", p.slots_busy + " / " + p.slots_total)], cls: "num" },
        { nodes: [el("span", bytes(p.rss_bytes))], cls: "num" }, { nodes: [el("span", p.cpu_percent.toFixed(1) + "%")], cls: "num" },
        { nodes: [el("span", secs(p.up_seconds))] },
        { nodes: [el("span", p.host_cpu_percent.toFixed(0) + "% / " + p.host_mem_used_percent.toFixed(0) + "% / " + p.load1.toFixed(2))] }]);
    });
    fill("schedulers", v.schedulers || [], msg("no schedulers"), 6, function (s) {
      var role = s.master ? [el("span", msg("master"), "badge")] : [el("span", msg("standby"))];
      return row([{ nodes: [el("span", s.host + ":" + s.pid)], cls: "mono" }, { nodes: [el("span", s.runtime)] }, { nodes: role },
        { nodes: [el("span", s.last_pass ? s.last_pass.slice(0, 19).replace("T", " ") + " UTC" : "\u2014")] },
        { nodes: [el("span", s.promoted)], cls: "num" }, { nodes: [el("span", s.fired)], cls: "num" }]);
    });
    var r = v.redis || {};
    var set = function (k, s) { var e = document.querySelector('[data-redis="' + k + '"]'); if (e) e.textContent = s; };
    set("version", r.version); set("mode", r.mode + " / " + r.role); set("uptime", secs(r.uptime_seconds));
    set("clients", r.connected_clients); set("policy", r.max_memory_policy); set("ops", r.ops_per_sec);
    set("memory", bytes(r.used_memory) + " (" + msg("peak") + " " + bytes(r.peak_memory) + (r.max_memory ? ", " + msg("limit") + " " + bytes(r.max_memory) : "") + ")");
  }
  var state = document.getElementById("live-state");
  var es = new EventSource(base + "events");
  es.addEventListener("overview", function (ev) {
    try { update(JSON.parse(ev.data)); state.textContent = msg("live, updated"); state.parentNode.classList.remove("stale"); } catch (e) { /* a bad event: keep the last view */ }
  });
  es.onerror = function () { state.textContent = msg("reconnecting; last update"); state.parentNode.classList.add("stale"); };
})();
// the Events page: new events of the stream come by server-sent events
// (one shared reader per dashboard) and go on top of the table; without
// script the page shows the newest events as of its load.
(function () {
  var table = document.getElementById("job-events");
  if (!table || !table.dataset.follow || !window.EventSource) return;
  var base = document.body.dataset.base || "/";
  var messages = {};
  try { messages = JSON.parse(document.body.dataset.messages || "{}"); } catch (e) { messages = {}; }
  function msg(s) { return messages[s] || s; }
  var body = table.querySelector("tbody");
  var max = parseInt(table.dataset.count, 10) || 100;
  var live = document.getElementById("job-events-live");
  var state = document.getElementById("job-events-state");
  var jobState = document.getElementById("job-state");
  function cell(tr, text, cls, href) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    if (text !== "" && text !== null && text !== undefined) {
      var n = document.createElement(href ? "a" : "span");
      if (href) n.href = href;
      n.textContent = String(text);
      td.appendChild(n);
    }
    tr.appendChild(td);
  }
  function add(v) {
    if (body.querySelector('tr[data-id="' + v.stream_id + '"]')) return; // shown already
    var tr = document.createElement("tr");
    tr.dataset.id = v.stream_id;
    var td = document.createElement("td"), t = document.createElement("time");
    t.setAttribute("datetime", v.time);
    t.textContent = v.time ? v.time.slice(0, 19).replace("T", " ") + " UTC" : "\u2014";
    td.appendChild(t); tr.appendChild(td);
    cell(tr, v.event, "mono");
    cell(tr, v.class, "mono");
    cell(tr, v.queue, "", v.queue ? base + "queues/" + encodeURIComponent(v.queue) : null);
    cell(tr, v.id, "mono", v.id ? base + "job-events?id=" + encodeURIComponent(v.id) : null);
    cell(tr, v.worker, "mono");
    cell(tr, v.attempt ? v.attempt : "", "num");
    // as Go writes a duration: 840ms, 2.3s
    cell(tr, v.duration_ms ? (v.duration_ms < 1000 ? v.duration_ms + "ms" : (v.duration_ms / 1000) + "s") : "", "num");
    var empty = body.querySelector("tr.empty");
    if (empty) empty.remove();
    body.insertBefore(tr, body.firstChild);
    while (body.rows.length > max) body.deleteRow(body.rows.length - 1);
    if (jobState && v.state) { jobState.textContent = msg(v.state); jobState.dataset.state = v.state; }
  }
  var q = table.dataset.query ? "&" + table.dataset.query : "";
  var after = table.dataset.last ? "&after=" + encodeURIComponent(table.dataset.last) : "";
  var es = new EventSource(base + "api/job-events?follow=1" + q + after);
  es.onopen = function () { live.hidden = false; state.textContent = msg("live"); live.classList.remove("stale"); };
  es.addEventListener("job-event", function (ev) {
    try { add(JSON.parse(ev.data)); } catch (e) { /* a bad event: keep the rest */ }
  });
  es.onerror = function () { live.hidden = false; state.textContent = msg("reconnecting"); live.classList.add("stale"); };
})();
