/* Shared by the pages of the item tasks (SSA labelling, multi-reference): views, packets, the end.
 *
 * ItemPage.start({render}) connects (MephistoLive) and calls render(view, isNewItem) for every view
 * the server sends: the first one, each answer, and the full current view after a reload or a
 * reconnection (the server knows the item and step; the page only shows it). ItemPage.send(data)
 * sends one answer as a MephistoLive action (resent until acknowledged, stored once). At
 * "complete", "blocked" or "unavailable" the page submits the unit and shows the server's message.
 * The page expects elements #title, #status, #task, #error and #warning; every word comes from
 * the server (the view's ``text``, MephistoLive.say for the connection lines); all text goes in
 * with textContent.
 */
var ItemPage = (function () {
  "use strict";
  var view = null, submitting = false, handlers = {};
  var TERMINAL = ["complete", "blocked", "unavailable"];
  var $ = function (id) { return document.getElementById(id); };

  function setStatus(text) { $("status").textContent = text; $("status").hidden = !text; }

  function send(data) {
    if (!view || view.status !== "working") return false;
    data.type = "answer";
    data.position = view.position;
    if (!MephistoLive.send(data)) return false;
    $("error").textContent = "";
    handlers.render(view, false);
    return true;
  }

  function onView(v) {
    var isNew = !view || v.position !== view.position || v.status !== view.status;
    view = v;
    window.__itemView = v;  // for the simulated workers and tests
    if (TERMINAL.indexOf(v.status) >= 0) { finish(v); return; }
    if (!v.item) { $("task").hidden = true; return; }  // no item on the page: the next view says what is next
    $("task").hidden = false;
    setStatus("");
    $("error").textContent = v.error || "";
    $("warning").textContent = v.warning || "";
    $("warning").hidden = !v.warning;
    handlers.render(v, isNew);
  }

  function finish(v) {
    $("task").hidden = true;
    document.body.setAttribute("data-status", v.status);
    if (submitting) return;
    submitting = true;
    var done = (v.text && v.text.done) || v.message;
    setStatus(MephistoLive.say("saving"));
    MephistoLive.submit({ status: v.status, done: v.done }).then(function () {
      setStatus(done);
      document.body.setAttribute("data-finished", "true");
    }, function () { submitting = false; setStatus(MephistoLive.say("save_failed")); });
  }

  function start(h) {
    handlers = h;
    MephistoLive.loadTitle($("title"));
    MephistoLive.start({
      onView: onView,
      onUnavailable: function (reason) {
        $("task").hidden = true;
        setStatus(reason);
        document.body.setAttribute("data-unavailable", "true");
      },
      onStatus: function (s) {
        if (["expired", "timeout", "disconnect", "returned", "rejected"].indexOf(s) >= 0 && !submitting) {
          $("task").hidden = true;
          setStatus(MephistoLive.say("gone", { status: s }));
        }
      }
    }).then(function (r) {
      if (r.preview) setStatus(MephistoLive.say("preview"));
      if (r.unavailable) { setStatus(r.unavailable); document.body.setAttribute("data-unavailable", "true"); }
    }).catch(function () { setStatus(MephistoLive.say("unreachable")); });
  }

  return { start: start, send: send, busy: MephistoLive.busy };
})();
