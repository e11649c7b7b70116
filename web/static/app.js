// resque-go dashboard: live overview by server-sent events. Everything
// from Redis goes into the page as text (textContent), never as HTML.
"use strict";
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
    fill("queues", v.queues || [], "no queues", 3, function (q) {
      var a = el("a", q.name);
      a.href = base + "queues/" + encodeURIComponent(q.name);
      return row([{ nodes: [a] }, { nodes: [el("span", q.size)], cls: "num" }, { nodes: [el("span", secs(q.age_seconds))] }]);
    });
    fill("workers", v.workers || [], "no workers", 4, function (w) {
      var job = w.job ? [el("span", w.job.class, "mono"), document.createTextNode(" "), el("span", "on " + w.job.queue, "muted")] : [el("span", "idle", "muted")];
      return row([{ nodes: [el("span", w.id)], cls: "mono" }, { nodes: [el("span", (w.queues || []).join(", "))] }, { nodes: job },
        { nodes: [el("span", w.job ? secs(w.running_seconds) : "")] }]);
    });
    var r = v.redis || {};
    var set = function (k, s) { var e = document.querySelector('[data-redis="' + k + '"]'); if (e) e.textContent = s; };
    set("version", r.version); set("mode", r.mode + " / " + r.role); set("uptime", secs(r.uptime_seconds));
    set("clients", r.connected_clients); set("policy", r.max_memory_policy); set("ops", r.ops_per_sec);
    set("memory", bytes(r.used_memory) + " (peak " + bytes(r.peak_memory) + (r.max_memory ? ", limit " + bytes(r.max_memory) : "") + ")");
  }
  var state = document.getElementById("live-state");
  var es = new EventSource(base + "events");
  es.addEventListener("overview", function (ev) {
    try { update(JSON.parse(ev.data)); state.textContent = "live, updated"; state.parentNode.classList.remove("stale"); } catch (e) { /* a bad event: keep the last view */ }
  });
  es.onerror = function () { state.textContent = "reconnecting; last update"; state.parentNode.classList.add("stale"); };
})();
