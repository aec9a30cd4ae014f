/* The Mephisto 1.1 router protocol, shared by this package's task pages (plain JavaScript, no build).
 *
 * MephistoLive.start({onView, onStatus}) registers the worker (POST /request_agent), opens the
 * router websocket ("alive" + heartbeats, reconnecting), and calls onView(view) with the
 * initial view and every "client_bound_live_update" whose data.type is "state".
 * MephistoLive.send(data) sends one "mephisto_bound_live_update"; MephistoLive.submit(data)
 * posts /submit_task and tells the provider. Every page shows server text with textContent.
 */
var MephistoLive = (function () {
  "use strict";
  var ROUTER_PROTOCOL = "2.0.3";  // the mephisto-task version whose router protocol this speaks
  var agentId = null, socket = null, handlers = {}, submitted = false;

  function now() { return Date.now() / 1000; }
  function post(path, body) {
    return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                         body: JSON.stringify(body) }).then(function (r) { return r.json(); });
  }
  function raw(packetType, data) {
    if (!socket || socket.readyState !== 1) return false;
    socket.send(JSON.stringify({ packet_type: packetType, subject_id: agentId, data: data || {},
                                 client_timestamp: now() }));
    return true;
  }
  function onPacket(packet) {
    if (packet.packet_type === "client_bound_live_update" && packet.data && packet.data.type === "state") {
      handlers.onView(packet.data);
    } else if (packet.packet_type === "update_status" && packet.data && handlers.onStatus) {
      handlers.onStatus(packet.data.status);
    }
  }
  function connect() {
    var proto = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(proto + window.location.host + "/");
    // a heartbeat right away: the router only watches for a silent page once it has had one
    socket.onopen = function () { raw("alive", {}); raw("heartbeat", {}); };
    socket.onmessage = function (ev) { try { onPacket(JSON.parse(ev.data)); } catch (e) { console.error(e); } };
    socket.onclose = function () { if (!submitted) setTimeout(connect, 1000); };
  }
  function loadTitle(el) {
    fetch("/task_config.json?mephisto_task_version=" + ROUTER_PROTOCOL).then(function (r) { return r.json(); })
      .then(function (cfg) { if (cfg.task_title) { el.textContent = cfg.task_title; document.title = cfg.task_title; } })
      .catch(function () {});
  }
  function start(h) {
    handlers = h;
    var registration = getAgentRegistration();
    if (!registration.worker_name || !registration.assignment_id) {
      return Promise.resolve({ preview: true });
    }
    return post("/request_agent", { provider_data: registration, client_timestamp: now() }).then(function (packet) {
      var d = packet.data || {};
      if (!d.agent_id) return { unavailable: d.failure_reason || "There is no work for you in this task right now." };
      agentId = d.agent_id;
      connect();
      setInterval(function () { raw("heartbeat", {}); }, 3000);
      handlers.onView(d.init_task_data);
      return { started: true };
    });
  }
  function send(data) { return raw("mephisto_bound_live_update", data); }
  function submit(finalData) {
    submitted = true;
    return post("/submit_task", { USED_AGENT_ID: agentId, final_data: finalData, client_timestamp: now() })
      .then(function () {
        try { if (typeof handleSubmitToProvider === "function") handleSubmitToProvider({ done: true }); } catch (e) {}
      }, function (err) { submitted = false; throw err; });
  }
  return { start: start, send: send, submit: submit, loadTitle: loadTitle };
})();
