/* ACUTE-Eval page: plain JavaScript, no bundle, no build step, no CDN.
 *
 * The router serves this file, acute.css, the shared router-protocol client
 * mephisto_live.js (MephistoLive: registration, websocket, heartbeats, submit) and the
 * provider's wrap_crowd_source.js. Flow: MephistoLive.start -> one action per judgment,
 * answered by a view from the backend (which has already stored the judgment) -> MephistoLive.submit.
 * After a reload or a reconnection the server's view puts the worker back at the same comparison.
 * The page has no wording of its own: every instruction, label and message is in the view's
 * ``text`` (rendered by the server from the task's configuration, acute/texts.py), the
 * connection lines come from MephistoLive.say. Every text is put in the page with textContent:
 * shown, never run.
 */
(function () {
  "use strict";
  var view = null, submitted = false, localError = false;
  var $ = function (id) { return document.getElementById(id); };

  var el = MephistoLive.el;
  function setStatus(text) { $("status").textContent = text; $("status").hidden = !text; }
  function say(key) { return (view && view.text && view.text[key]) || ""; }  // every word comes from the server

  // The two conversations and the two choices, built from the server's view (text only).
  function renderComparison(c, same) {
    window.__acuteBuilds = (window.__acuteBuilds || 0) + 1;  // for tests: views of one comparison build it once
    var box = $("conversations");
    box.textContent = "";
    c.sides.forEach(function (side, i) {
      var col = el("div", "conversation side-" + (i + 1));
      col.setAttribute("data-side", i === 0 ? "left" : "right");
      col.appendChild(el("h3", null, say("sides")[i] || ""));
      side.turns.forEach(function (t) {
        var turn = el("div", "turn " + (t.evaluated ? "evaluated" : "other"), t.text);
        turn.title = t.evaluated ? side.label : say("partner");
        col.appendChild(turn);
      });
      box.appendChild(col);
    });
    var choices = $("choices");
    var picked = same ? document.querySelector("input[name=choice]:checked") : null;
    picked = picked ? picked.value : null;  // a view of the same comparison keeps what the worker chose
    choices.textContent = "";
    var ties = say("ties") || {};  // with allow_tie: "tie" and "both_bad", worded by the server
    ["left", "right"].concat(Object.keys(ties)).forEach(function (value, i) {
      var label = el("label", i < 2 ? "choice-" + (i + 1) : "choice-tie");
      var input = el("input");
      input.type = "radio"; input.name = "choice"; input.value = value; input.id = "choice-" + value;
      input.checked = value === picked;
      label.appendChild(input);
      if (i < 2) label.appendChild(el("span", "swatch"));
      label.appendChild(document.createTextNode(i < 2 ? c.sides[i].label : ties[value]));
      choices.appendChild(label);
    });
  }

  function render(v) {
    var same = view && !view.finished && !v.finished && view.comparison.position === v.comparison.position;
    // A view of the comparison already on the page (the answer to a resend, the view after a
    // reconnection) leaves its conversations and choices in place: no flicker, and the worker's
    // scroll position, choice and focus stay where they were.
    var unchanged = same && JSON.stringify(view.comparison.sides) === JSON.stringify(v.comparison.sides);
    view = v;
    window.__acuteView = v;  // for the simulated workers and tests
    window.__acuteViews = (window.__acuteViews || 0) + 1;
    // A server error is shown; a view of the same comparison without one (an answer to a resend,
    // a reconnection) keeps the page's own "choose a speaker" / "reason too short" message.
    if (v.error || !same || !localError) { $("error").textContent = v.error || ""; localError = false; }
    if (v.finished) { finish(); return; }
    var c = v.comparison;
    $("progress").textContent = say("progress");
    // The introduction (what to do, about how long it takes) comes before the first comparison only.
    $("intro").hidden = c.position !== 1;
    $("intro-heading").textContent = say("intro_heading");
    $("intro-text").textContent = say("intro");
    $("intro-steps").textContent = say("steps");
    $("question").textContent = say("question");
    $("instructions").textContent = say("instructions");
    $("answer-legend").textContent = say("answer");
    $("reason-label").textContent = say("reason_label");
    $("submit").textContent = say("submit");
    if (!unchanged) renderComparison(c, same);
    if (!same) $("reason").value = "";
    MephistoLive.draft($("reason"), c.position);  // an unsent reason survives a reload, on this comparison only
    $("reason").setAttribute("minlength", v.min_reason_length);
    onReasonInput();
    $("task").hidden = false;
    setStatus("");
    $("submit").disabled = MephistoLive.busy();
  }

  function reasonMessage() { return say("reason_short"); }

  // Live, as the worker types: the length hint counts down and goes away, and so does the
  // "reason too short" error, once the reason is long enough.
  function onReasonInput() {
    if (!view || view.finished) return;
    var missing = view.min_reason_length - $("reason").value.trim().length;
    $("reason-help").textContent = missing > 0 ? say("reason_help").replace("{missing}", missing) : "";
    $("reason-help").hidden = missing <= 0;
    if (missing <= 0 && $("error").textContent === reasonMessage()) $("error").textContent = "";
  }

  function finish() {
    $("task").hidden = true;
    $("progress").textContent = say("progress");
    if (submitted) return;
    submitted = true;
    var blocked = !!(view && view.blocked);
    if (blocked) document.body.setAttribute("data-blocked", "true");
    // a worker who failed the check comparison is told so (the server's "done"), not thanked
    MephistoLive.submitPage({ judgments: view ? view.done : 0 }, say("done"), setStatus)
      .then(function (saved) { submitted = saved; });
  }

  function onSubmit(ev) {
    ev.preventDefault();
    if (MephistoLive.busy() || !view || view.finished) return;
    var picked = document.querySelector("input[name=choice]:checked");
    var reason = $("reason").value.trim();
    if (!picked) { $("error").textContent = say("choose_speaker"); localError = true; return; }
    if (reason.length < view.min_reason_length) {
      $("error").textContent = reasonMessage();
      localError = true;
      return;
    }
    if (MephistoLive.send({ type: "judgment", position: view.comparison.position, choice: picked.value,
                            reason: reason }, [$("reason")])) {
      $("submit").disabled = true;  // until the server's view answers (it stores the judgment once)
    }
  }

  // Every view from the server (MephistoLive drops older ones): the first one, each answer to a
  // judgment, and the full current view after a reload or a reconnection.
  function onView(v) { render(v); }

  function start() {
    $("judgment").addEventListener("submit", onSubmit);
    $("reason").addEventListener("input", onReasonInput);
    MephistoLive.startPage({ onView: onView, setStatus: setStatus, ended: function () { return submitted; } });
  }

  start();
})();
