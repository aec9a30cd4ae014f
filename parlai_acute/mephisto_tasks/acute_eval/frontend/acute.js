/* ACUTE-Eval page: plain JavaScript speaking the Mephisto 1.1 router protocol directly.
 *
 * No bundle, no build step, no CDN: the router serves this file, acute.css and the
 * provider's wrap_crowd_source.js (getAgentRegistration / handleSubmitToProvider).
 * Flow: POST /request_agent -> websocket "alive" + heartbeats -> one
 * "mephisto_bound_live_update" per judgment, answered by a "client_bound_live_update"
 * view from the backend (which has already stored the judgment) -> POST /submit_task.
 * Every text from a dialogue is put in the page with textContent: shown, never run.
 */
(function () {
  "use strict";
  var agentId = null, socket = null, view = null, sending = false, submitted = false, pendingTimer = null;
  var ROUTER_PROTOCOL = "2.0.3";  // the mephisto-task version whose router protocol this page speaks
  var $ = function (id) { return document.getElementById(id); };

  function now() { return Date.now() / 1000; }
  function uuid() {
    return "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx".replace(/[xy]/g, function (c) {
      var r = (Math.random() * 16) | 0; return (c === "x" ? r : (r & 3) | 8).toString(16);
    });
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;  // text only, never markup
    return node;
  }
  function setStatus(text) { $("status").textContent = text; $("status").hidden = !text; }
  function post(path, body) {
    return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                         body: JSON.stringify(body) }).then(function (r) { return r.json(); });
  }
  function send(packetType, data) {
    if (!socket || socket.readyState !== 1) return false;
    socket.send(JSON.stringify({ packet_type: packetType, subject_id: agentId, data: data || {},
                                 client_timestamp: now() }));
    return true;
  }

  function render(v) {
    view = v;
    window.__acuteView = v;  // for the simulated workers and tests
    $("error").textContent = v.error || "";
    if (v.finished) { finish(); return; }
    var c = v.comparison;
    $("progress").textContent = "Comparison " + c.position + " of " + c.n;
    // The introduction (what to do, about how long it takes) comes before the first comparison only.
    $("intro").hidden = c.position !== 1;
    $("intro-text").textContent = "You will compare " + c.n + (c.n === 1 ? " pair" : " pairs") +
      " of conversations, one pair at a time. It takes about " + v.minutes +
      (v.minutes === 1 ? " minute" : " minutes") + " in all.";
    $("question").textContent = v.question;
    var box = $("conversations");
    box.textContent = "";
    c.sides.forEach(function (side, i) {
      var col = el("div", "conversation side-" + (i + 1));
      col.setAttribute("data-side", i === 0 ? "left" : "right");
      col.appendChild(el("h3", null, "Conversation " + (i + 1) + " (judge " + side.label + ")"));
      side.turns.forEach(function (t) {
        var turn = el("div", "turn " + (t.evaluated ? "evaluated" : "other"), t.text);
        turn.title = t.evaluated ? side.label : "partner";
        col.appendChild(turn);
      });
      box.appendChild(col);
    });
    var choices = $("choices");
    choices.textContent = "";
    ["left", "right"].forEach(function (value, i) {
      var label = el("label", "choice-" + (i + 1));
      var input = el("input");
      input.type = "radio"; input.name = "choice"; input.value = value; input.id = "choice-" + value;
      label.appendChild(input);
      label.appendChild(el("span", "swatch"));
      label.appendChild(document.createTextNode(c.sides[i].label));
      choices.appendChild(label);
    });
    if (v.ack !== null || !$("reason").value) $("reason").value = "";
    $("reason").setAttribute("minlength", v.min_reason_length);
    onReasonInput();
    $("task").hidden = false;
    setStatus("");
    sending = false;
    $("submit").disabled = false;
  }

  function reasonMessage() { return "Please give a reason of at least " + view.min_reason_length + " characters."; }

  // Live, as the worker types: the length hint counts down and goes away, and so does the
  // "reason too short" error, once the reason is long enough.
  function onReasonInput() {
    if (!view || view.finished) return;
    var missing = view.min_reason_length - $("reason").value.trim().length;
    $("reason-help").textContent = missing > 0 ? "At least " + view.min_reason_length + " characters (" +
      missing + " more)." : "";
    $("reason-help").hidden = missing <= 0;
    if (missing <= 0 && $("error").textContent === reasonMessage()) $("error").textContent = "";
  }

  function finish() {
    $("task").hidden = true;
    $("progress").textContent = view && view.n ? "Done" : "";
    if (submitted) return;
    submitted = true;
    var blocked = !!(view && view.blocked);
    if (blocked) { document.body.setAttribute("data-blocked", "true"); $("progress").textContent = "Ended"; }
    setStatus("Saving…");
    post("/submit_task", { USED_AGENT_ID: agentId, final_data: { judgments: view ? view.done : 0 },
                           client_timestamp: now() })
      .then(function () {
        // A worker who failed the check comparison is told so, not thanked as if the work were done.
        setStatus(blocked ? view.blocked_message : "Thank you! Your answers are saved. You can close this page.");
        document.body.setAttribute("data-finished", "true");
        try { if (typeof handleSubmitToProvider === "function") handleSubmitToProvider({ done: true }); } catch (e) {}
      })
      .catch(function () { submitted = false; setStatus("Could not reach the server; please retry in a moment."); });
  }

  function onSubmit(ev) {
    ev.preventDefault();
    if (sending || !view || view.finished) return;
    var picked = document.querySelector("input[name=choice]:checked");
    var reason = $("reason").value.trim();
    if (!picked) { $("error").textContent = "Please choose one of the two speakers."; return; }
    if (reason.length < view.min_reason_length) {
      $("error").textContent = reasonMessage();
      return;
    }
    sending = true;
    $("submit").disabled = true;
    var data = { type: "judgment", position: view.comparison.position, choice: picked.value, reason: reason,
                 update_id: uuid() };
    var attempt = function () {
      if (!sending) return;
      if (!send("mephisto_bound_live_update", data)) setStatus("Reconnecting…");
      pendingTimer = setTimeout(attempt, 4000);  // resend until acknowledged (stored once server-side)
    };
    attempt();
  }

  function onPacket(packet) {
    if (packet.packet_type === "client_bound_live_update" && packet.data && packet.data.type === "state") {
      var v = packet.data;
      // Mephisto's router delivers every packet twice (its resend-on-"error" fires on ws's null):
      // only a view that moves forward, or answers the judgment in flight with an error, counts.
      var forward = !view || v.done > view.done || (v.finished && !view.finished);
      if (!forward && !(sending && v.error)) return;
      clearTimeout(pendingTimer);
      sending = false;
      render(v);
    } else if (packet.packet_type === "update_status" && packet.data) {
      var s = packet.data.status;
      if (["expired", "timeout", "disconnect", "returned", "rejected"].indexOf(s) >= 0 && !submitted) {
        $("task").hidden = true;
        setStatus("This task is no longer available (" + s + "). Your submitted answers are saved.");
      }
    }
  }

  function connect() {
    var proto = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(proto + window.location.host + "/");
    // A heartbeat right away: the router only watches for a silent page once it has had one.
    socket.onopen = function () { send("alive", {}); send("heartbeat", {}); };
    socket.onmessage = function (ev) { try { onPacket(JSON.parse(ev.data)); } catch (e) { console.error(e); } };
    socket.onclose = function () { if (!submitted) setTimeout(connect, 1000); };
  }

  function start() {
    $("judgment").addEventListener("submit", onSubmit);
    $("reason").addEventListener("input", onReasonInput);
    fetch("/task_config.json?mephisto_task_version=" + ROUTER_PROTOCOL).then(function (r) { return r.json(); }).then(function (cfg) {
      if (cfg.task_title) { $("title").textContent = cfg.task_title; document.title = cfg.task_title; }
    }).catch(function () {});
    var registration = getAgentRegistration();
    if (!registration.worker_name || !registration.assignment_id) {
      setStatus("Preview: accept the task to start.");
      return;
    }
    post("/request_agent", { provider_data: registration, client_timestamp: now() }).then(function (packet) {
      var d = packet.data || {};
      if (!d.agent_id) {
        setStatus(d.failure_reason || "There is no work for you in this task right now.");
        document.body.setAttribute("data-unavailable", "true");
        return;
      }
      agentId = d.agent_id;
      connect();
      setInterval(function () { send("heartbeat", {}); }, 3000);
      render(d.init_task_data);
    }).catch(function () { setStatus("Could not reach the task server; please reload the page."); });
  }

  start();
})();
