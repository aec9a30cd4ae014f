/* The Mephisto 1.1 router protocol and the live session, shared by this package's task pages
 * (plain JavaScript, no build). The server is the source of truth; this page only shows its views.
 *
 * MephistoLive.start({onView, onStatus}) registers the worker (POST /request_agent), opens the
 * router websocket ("alive", heartbeats, "hello"), and calls onView(view) with the first view
 * and every newer one (views carry a server-clock "version"; older or repeated ones are dropped).
 * MephistoLive.send(data) sends one action with a unique action_id (this tab's id + a counter)
 * and resends it until a view acknowledges it (the server stores each action once and always
 * answers with the current view); busy() is true meanwhile. MephistoLive.submit(data) posts
 * /submit_task and tells the provider.
 *
 * Connection: when the socket closes or goes silent the page says "Reconnecting to the task
 * server..." at once and registers again every second until the server is back (the same
 * process reconnects the same agent; a relaunched one continues the worker's unit in a new
 * agent), then shows the server's current view. Tabs: the newest tab on an assignment owns it
 * (hello with claim); another tab of the same browser hears it at once (BroadcastChannel), any
 * other from the server's views (view.tab); it says so, stops sending, puts the words of the action
 * it was sending back in their boxes, and offers to continue here.
 * The router sends an agent's packets to the one socket that last sent a heartbeat, and every page of
 * an assignment (two browsers, two profiles) is the same agent: so a page sends a heartbeat right
 * before each packet (the answer comes back to it), and while it is shown it asks the server every
 * few seconds which tab owns the assignment ("ping", answered with {type: "owner", tab, version});
 * a page that is not the owner hears it within seconds, and the owner asks again for a view it missed.
 * Pings and resends go at random moments: two pages in step (both every 3 s) would have the other's
 * heartbeat land between each packet and its answer, every time.
 * Two pages registering at the same instant get one agent: the later one is told to register again
 * (init_task_data.again) and then reaches the same agent. A page of an assignment whose work was
 * submitted, registering again after a relaunch, is told so (init_task_data.already_submitted): it
 * says "already submitted" at once, for good, and starts nothing. Work finished but not submitted (the
 * server stopped before the page's submit reached it) is not: the page registers again, is shown its
 * finished view by the new agent, and submits there.
 * Wording: this file and the pages have none of their own beyond the page's loading line. The
 * lines shared by every task (connection, tabs, saving, preview; mephisto_tasks/live/texts.py) are
 * written into the page when it is built (#live-texts), so a server down at the first load is
 * said in words, and come again with the task configuration; say(key, values) gives them to the
 * pages. Every text from the server goes in with textContent.
 *
 * Drafts: MephistoLive.draft(box, scope) keeps what the worker has typed in a text box but not sent
 * (in localStorage, under the assignment, the box and the scope: the item / turn / position its text
 * belongs to), so a reload or a second tab shows it again, and never on another item or turn. A page
 * calls it at every render with the box's current scope (null: no draft there, e.g. a disabled box);
 * a new scope puts that scope's draft in the box (empty if none). send(data, boxes) names the boxes
 * whose text the action carries: their drafts are removed once a view acknowledges it without an
 * error (the server has stored it), and all of the assignment's when its unit is submitted. A draft
 * is the worker's own unsent typing, read back only into the box's value (text, never markup); the
 * server never sees it and stays the source of truth for everything stored.
 */
var MephistoLive = (function () {
  "use strict";
  var ROUTER_PROTOCOL = "2.0.3";  // the mephisto-task version whose router protocol this speaks
  var RESEND_MS = 3000, HEARTBEAT_MS = 3000, SILENT_MS = 10000, RETRY_MS = 1000, REQUEST_MS = 6000;
  var texts = null, config = null, loading = "";
  var tab = randomId(), counter = 0;
  var agentId = null, socket = null, handlers = {}, registration = null, channel = null;
  var submitted = false, displaced = false, reconnecting = false, lostAt = 0, retryTimer = null, registering = false;
  var inflight = null, resendTimer = null, lastVersion = -1, lastHeard = 0, claimNext = true, claiming = true;
  var shown = null;  // the last view shown (shown again, not busy, when this tab is displaced)
  var inflightDrafts = [], draftBoxes = [], DRAFT_PREFIX = "parlai-acute:draft:";
  var GIVE_UP_MS = 90000;  // a relaunched task opens its units within seconds; after this, "no work" is final

  function randomId() {
    var a = new Uint32Array(4);
    (window.crypto || window.msCrypto).getRandomValues(a);
    return Array.prototype.map.call(a, function (x) { return x.toString(36); }).join("");
  }
  function now() { return Date.now() / 1000; }
  function jitter(ms) { return ms * (0.5 + Math.random()); }

  // A shared line (written into the page, or from the task configuration), "{name}" filled from
  // values; the page's own loading line if the page has none.
  function builtIn() {
    var node = document.getElementById("live-texts");
    try { return node ? JSON.parse(node.textContent) : null; } catch (e) { return null; }
  }
  function lines() {
    if (!texts) texts = builtIn();
    return texts || {};
  }
  function say(key, values) {
    var text = lines()[key];
    if (!text) return loading;
    Object.keys(values || {}).forEach(function (k) { text = text.split("{" + k + "}").join(values[k]); });
    return text;
  }
  // What the worker is told when Mephisto gives them no unit: never Mephisto's own failure_reason,
  // but ours for it (texts.failure_text does the same lookup), a generic line for one we do not know.
  function failureText(reason) {
    if (!reason) return say("no_work");
    var known = lines().failure_reasons;
    return known && Object.prototype.hasOwnProperty.call(known, reason) ? known[reason] : say("failure_unknown");
  }
  function loadConfig() {
    if (!config) {
      config = fetch("/task_config.json?mephisto_task_version=" + ROUTER_PROTOCOL)
        .then(function (r) { return r.json(); })
        .then(function (cfg) { texts = cfg.texts || texts; return cfg; },
              function (e) { config = null; throw e; });  // the next reconnection asks again
    }
    return config;
  }

  // One line at the top of every page about the connection or another tab (not part of the task).
  function banner(text, button) {
    var box = document.getElementById("live-banner");
    if (!box) {
      // a tab that is not the assignment's owner shows its page greyed out and takes no clicks
      var style = document.createElement("style");
      style.textContent = "body[data-connection=elsewhere] > *:not(#live-banner)" +
        "{pointer-events:none;opacity:0.45}";
      document.head.appendChild(style);
      box = document.createElement("div");
      box.id = "live-banner";
      box.setAttribute("role", "status");
      box.style.cssText = "position:sticky;top:0;z-index:1000;padding:10px 14px;background:#fff4ce;" +
        "border-bottom:1px solid #d9b600;font:15px/1.4 sans-serif;color:#222";
      document.body.insertBefore(box, document.body.firstChild);
    }
    box.textContent = text || "";
    box.hidden = !text;
    document.body.setAttribute("data-connection", !text ? "ok" : displaced ? "elsewhere" : "reconnecting");
    if (button) {
      var b = document.createElement("button");
      b.type = "button"; b.id = "continue-here"; b.textContent = button.label; b.style.marginLeft = "12px";
      b.addEventListener("click", button.action);
      box.appendChild(b);
    }
  }

  function post(path, body) {
    var ctl = window.AbortController ? new AbortController() : null;
    var timer = ctl ? setTimeout(function () { ctl.abort(); }, REQUEST_MS) : null;
    return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                         body: JSON.stringify(body), signal: ctl ? ctl.signal : undefined })
      .then(function (r) { clearTimeout(timer); return r.json(); }, function (e) { clearTimeout(timer); throw e; });
  }
  function raw(packetType, data) {
    if (!socket || socket.readyState !== 1 || displaced) return false;
    // the answer goes to the socket that sent the last heartbeat: this one
    if (packetType === "mephisto_bound_live_update") raw("heartbeat", {});
    socket.send(JSON.stringify({ packet_type: packetType, subject_id: agentId, data: data || {},
                                 client_timestamp: now() }));
    return true;
  }

  // ---------------------------------------------------------------- views and actions
  function deliver(v) {
    if (!v || displaced) return;
    if (v.version !== undefined && v.version <= lastVersion) return;  // older, or delivered twice
    if (v.version !== undefined) lastVersion = v.version;
    if (v.tab === tab) claiming = false;
    // another tab owns the assignment now (while this one's claim is on its way, views name the old owner)
    if (v.tab && v.tab !== tab && !claiming) { displace(); return; }
    if (inflight && v.ack === inflight.action_id && !v.waiting) {
      inflight = null;
      clearTimeout(resendTimer);
      if (!v.error) inflightDrafts.forEach(forget);  // stored: the text is the server's now
      inflightDrafts = [];
    }
    if (!reconnecting) banner("");
    shown = v;
    handlers.onView(v);
  }
  // the server's answer to a ping: which tab owns the assignment, and its latest view's version
  function owner(o) {
    if (displaced || submitted) return;
    if (o.tab && o.tab !== tab && !claiming) { displace(); return; }
    if (o.version !== undefined && o.version > lastVersion) raw("mephisto_bound_live_update", { type: "hello", tab: tab });
  }
  function ping() {
    if (!socket || socket.readyState !== 1 || displaced || submitted || document.visibilityState === "hidden") return;
    raw("mephisto_bound_live_update", { type: "ping", tab: tab });
  }
  function resend() {
    clearTimeout(resendTimer);
    if (!inflight || displaced) return;
    raw("mephisto_bound_live_update", inflight);
    // until a view acknowledges it (the server stores it once); at a random moment, never in step with
    // another page's heartbeats (which would take every answer to it)
    resendTimer = setTimeout(resend, jitter(RESEND_MS));
  }
  function send(data, boxes) {
    if (inflight || displaced || submitted) return false;
    counter += 1;
    data.action_id = tab + ":" + counter;
    data.tab = tab;
    inflight = data;
    inflightDrafts = (boxes || []).map(function (box) { return box.__draftKey; }).filter(Boolean);
    resend();
    return true;
  }

  // ---------------------------------------------------------------- drafts
  function draftBase() {
    return registration && registration.agent_registration_id
      ? DRAFT_PREFIX + registration.agent_registration_id + ":" : null;
  }
  function storage(op, key, value) {  // localStorage may be off (private mode) or full: drafts are a help
    try { return window.localStorage[op](key, value); } catch (e) { return null; }
  }
  function forget(key) { storage("removeItem", key); }
  function keepDraft(ev) {
    var box = ev.target;
    if (!box.__draftKey) return;
    if (box.value) storage("setItem", box.__draftKey, box.value); else forget(box.__draftKey);
  }
  function draft(box, scope) {
    var base = draftBase();
    var key = base && scope !== null && scope !== undefined ? base + box.id + ":" + scope : null;
    if (draftBoxes.indexOf(box) < 0) {
      draftBoxes.push(box);
      box.addEventListener("input", keepDraft);
    }
    if (box.__draftKey === key) return;
    box.__draftKey = key;
    box.value = (key && storage("getItem", key)) || "";  // the value: shown as text, never markup
  }
  function forgetAllDrafts() {
    var base = draftBase(), keys = [];
    if (!base) return;
    try {
      for (var i = 0; i < window.localStorage.length; i++) keys.push(window.localStorage.key(i));
    } catch (e) { return; }
    keys.filter(function (k) { return k && k.indexOf(base) === 0; }).forEach(forget);
  }
  // another tab of this browser typed or sent: a box of the same assignment and scope follows it
  // (unless the worker is typing in it here, in the tab that owns the assignment)
  window.addEventListener("storage", function (ev) {
    if (!ev.key || ev.key.indexOf(DRAFT_PREFIX) !== 0) return;
    draftBoxes.forEach(function (box) {
      if (box.__draftKey === ev.key && (displaced || document.activeElement !== box)) box.value = ev.newValue || "";
    });
  });

  // ---------------------------------------------------------------- tabs
  function displace() {
    displaced = true;
    // the action on its way was not stored: its words go back in their boxes (still drafts)
    draftBoxes.forEach(function (box) {
      if (box.__draftKey && inflightDrafts.indexOf(box.__draftKey) >= 0 && !box.value) {
        box.value = storage("getItem", box.__draftKey) || "";
      }
    });
    inflight = null;
    inflightDrafts = [];
    clearTimeout(resendTimer);
    if (shown) handlers.onView(shown);  // shown again, no longer "Sending..."

    if (socket) { var s = socket; socket = null; s.close(); }
    banner(say("elsewhere"), { label: say("continue_here"), action: claim });
    document.body.setAttribute("data-connection", "elsewhere");
    if (handlers.onElsewhere) handlers.onElsewhere();
  }
  function claim() {
    displaced = false;
    claimNext = claiming = true;
    banner(say("reconnecting"));
    reconnect();
  }
  function listenToOtherTabs() {
    if (!window.BroadcastChannel) return;
    channel = new BroadcastChannel("parlai-acute:" + registration.agent_registration_id);
    channel.onmessage = function (ev) {
      if (ev.data && ev.data.type === "open" && ev.data.tab !== tab && !displaced && !submitted) displace();
    };
  }

  // ---------------------------------------------------------------- connection
  function register() {
    return post("/request_agent", { provider_data: registration, client_timestamp: now() }).then(function (packet) {
      var d = packet.data || {};
      if (!d.agent_id) return { unavailable: failureText(d.failure_reason) };
      if (d.init_task_data && d.init_task_data.already_submitted) {  // this assignment's work is in: for good
        return { unavailable: say("already_submitted"), final: true };
      }
      if (d.init_task_data && d.init_task_data.again) {  // another page of this assignment registered at once
        if (!reconnecting) { reconnecting = true; lostAt = Date.now(); }
        later(RETRY_MS);
        return { again: true };
      }
      agentId = d.agent_id;
      deliver(d.init_task_data);
      if (!displaced) openSocket();  // the view named another tab as the owner: this one waits for a click
      return { started: true };
    });
  }
  function openSocket() {
    if (socket) { var old = socket; socket = null; old.close(); }
    var proto = window.location.protocol === "https:" ? "wss://" : "ws://";
    var s = new WebSocket(proto + window.location.host + "/");
    socket = s;
    s.onopen = function () {
      lastHeard = Date.now();
      // a heartbeat right away: the router only watches for a silent page once it has had one
      raw("alive", {}); raw("heartbeat", {});
      raw("mephisto_bound_live_update", { type: "hello", tab: tab, claim: claimNext });
      if (claimNext && channel) channel.postMessage({ type: "open", tab: tab });
      claimNext = false;
      reconnecting = false;
      banner("");
      resend();
    };
    s.onmessage = function (ev) {
      lastHeard = Date.now();
      try { onPacket(JSON.parse(ev.data)); } catch (e) { console.error(e); }
    };
    s.onclose = function () { if (socket === s) { socket = null; lost(); } };
  }
  function lost() {
    if (submitted || displaced) return;
    if (!reconnecting) lostAt = Date.now();
    reconnecting = true;
    banner(say("reconnecting"));
    later(RETRY_MS);
  }
  function later(ms) {
    if (!retryTimer) retryTimer = setTimeout(function () { retryTimer = null; reconnect(); }, ms);
  }
  function reconnect() {
    if (submitted || displaced || registering) return;
    reconnecting = true;
    registering = true;
    banner(say("reconnecting"));
    loadConfig().then(register).then(function (r) {
      registering = false;
      if (!r.unavailable) return;
      // a relaunched task may not have opened its units yet: keep trying for a while
      if (!r.final && Date.now() - lostAt < GIVE_UP_MS) { later(2 * RETRY_MS); return; }
      reconnecting = false;
      unavailable(r.unavailable);
    }, function () { registering = false; later(RETRY_MS); });  // the server is still down: try again
  }
  function unavailable(reason) {
    banner("");
    if (handlers.onUnavailable) handlers.onUnavailable(reason);
  }
  function onPacket(packet) {
    if (packet.packet_type === "client_bound_live_update" && packet.data && packet.data.type === "state") {
      deliver(packet.data);
    } else if (packet.packet_type === "client_bound_live_update" && packet.data && packet.data.type === "owner") {
      owner(packet.data);
    } else if (packet.packet_type === "update_status" && packet.data) {
      var status = packet.data.status;
      if (status === "disconnect" && !submitted) {
        // the router stopped hearing this page (asleep, offline): the unit was cleared, its work is
        // kept; registering again continues it
        if (socket) { var s = socket; socket = null; s.close(); }
        lost();
      } else if (handlers.onStatus) {
        handlers.onStatus(status);
      }
    }
  }
  function watch() {  // heartbeats, and a socket that stays open but hears nothing counts as lost
    setInterval(function () {
      if (!socket || socket.readyState !== 1 || displaced) return;
      raw("heartbeat", {});
      if (Date.now() - lastHeard > SILENT_MS) { var s = socket; socket = null; s.close(); lost(); return; }
      setTimeout(ping, Math.random() * HEARTBEAT_MS);  // at a random moment: see resend
    }, HEARTBEAT_MS);
    document.addEventListener("visibilitychange", ping);  // back to this tab: ask at once
  }

  function loadTitle(el) {
    loadConfig().then(function (cfg) {
      if (cfg.task_title) { el.textContent = cfg.task_title; document.title = cfg.task_title; }
    }).catch(function () {});
  }
  // Registers once the configuration (and with it the shared lines) is here; a preview only reads it.
  function start(h) {
    handlers = h;
    var status = document.getElementById("status");
    loading = status ? status.textContent : "";
    registration = getAgentRegistration();
    if (!registration.worker_name || !registration.assignment_id) {
      return loadConfig().then(function () { return { preview: true }; });
    }
    listenToOtherTabs();
    watch();
    window.__mephistoLive = { tab: tab };  // for the simulated workers and tests
    return loadConfig().then(register).catch(function () { lost(); return { reconnecting: true }; });
  }
  function submit(finalData) {
    submitted = true;
    return post("/submit_task", { USED_AGENT_ID: agentId, final_data: finalData, client_timestamp: now() })
      .then(function () {
        forgetAllDrafts();
        try { if (typeof handleSubmitToProvider === "function") handleSubmitToProvider({ done: true }); } catch (e) {}
      }, function (err) {
        // the server stopped before the submit reached it: register again when it is back, and the
        // finished view it hands the new agent submits the work there (the page retries on that view)
        submitted = false;
        if (!socket) lost();
        throw err;
      });
  }
  // How every page starts: its title, the connection, and what it says when there is no work, the
  // assignment has ended, it is a preview, or the server cannot be reached. page: {onView,
  // setStatus(text), ended() -> true once the page is submitting its unit}; the page's #task is hidden
  // when there is nothing to do in it.
  function startPage(page) {
    function nothingToDo(text, unavailable) {
      document.getElementById("task").hidden = true;
      var intro = document.getElementById("intro");  // the task's explanation: nothing to explain now
      if (intro) intro.hidden = true;
      page.setStatus(text);
      if (unavailable) document.body.setAttribute("data-unavailable", "true");
    }
    loadTitle(document.getElementById("title"));
    return start({
      onView: page.onView,
      onUnavailable: function (reason) { nothingToDo(reason, true); },
      onStatus: function (s) {
        var over = ["expired", "timeout", "disconnect", "returned", "rejected"].indexOf(s) >= 0;
        if (over && !page.ended()) nothingToDo(say("gone", { status: s }));
      }
    }).then(function (r) {
      if (r.preview) page.setStatus(say("preview"));
      else if (r.unavailable) nothingToDo(r.unavailable, true);
      return r;
    }, function () { page.setStatus(say("unreachable")); return {}; });
  }

  // How every page ends: "Saving...", the unit submitted, then the page's last words; on failure the
  // worker is told to retry and the promise gives false (the page may submit again).
  function submitPage(data, doneText, setStatus) {
    setStatus(say("saving"));
    return submit(data).then(function () {
      setStatus(doneText);
      document.body.setAttribute("data-finished", "true");
      return true;
    }, function () { setStatus(say("save_failed")); return false; });
  }

  // An element for a page, its text put in as text (worker and model text is shown, never run).
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;  // text only, never markup
    return node;
  }

  return { start: start, send: send, submit: submit, draft: draft, loadTitle: loadTitle, say: say, el: el, startPage: startPage, submitPage: submitPage,
           busy: function () { return !!inflight; }, tab: function () { return tab; },
           agent: function () { return agentId; } };
})();
