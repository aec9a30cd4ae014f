/* Shared by the pages of the item tasks (SSA labelling, multi-reference): views, packets, the end.
 *
 * ItemPage.start({render}) connects (MephistoLive) and calls render(view, isNewItem) for every view
 * the server sends: the first one, each answer, and the full current view after a reload or a
 * reconnection (the server knows the item and step; the page only shows it). ItemPage.send(data)
 * sends one answer as a MephistoLive action (resent until acknowledged, stored once; ``boxes``: the
 * text boxes it carries, whose drafts go once it is stored, see MephistoLive.draft). At
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

  function send(data, boxes) {
    if (!view || view.status !== "working") return false;
    data.type = "answer";
    data.position = view.position;
    if (!MephistoLive.send(data, boxes)) return false;
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
    MephistoLive.submitPage({ status: v.status, done: v.done }, (v.text && v.text.done) || v.message, setStatus)
      .then(function (saved) { submitting = saved; });
  }

  function start(h) {
    handlers = h;
    MephistoLive.startPage({ onView: onView, setStatus: setStatus, ended: function () { return submitting; } });
  }

  // One turn of an item's conversation: the speaker's name (from the view's text) and the words, as text.
  function turn(t, text) {
    var node = MephistoLive.el("div", "turn " + t.speaker);
    node.appendChild(MephistoLive.el("span", "who", text[t.speaker === "A" ? "speaker_a" : "speaker_b"]));
    node.appendChild(document.createTextNode(t.text));  // text only, never markup
    return node;
  }

  return { start: start, send: send, busy: MephistoLive.busy, turn: turn };
})();
