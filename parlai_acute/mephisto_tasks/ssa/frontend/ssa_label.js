/* SSA labelling page: the context and B's response, then "Does the response make sense?" and, only
 * after "yes", "Is the response specific?". "No" to the first question sends the label at once
 * (a response that does not make sense is not specific). The server holds the items and the step:
 * "yes" to the first question (and "change my first answer") is an action the server stores, and
 * every view says which question of which item the worker is at (view.item.step), so a reload, a
 * second tab or a relaunch comes back to the same question. The page has no wording of its own:
 * every line is in the view's ``text`` (ssa/texts.py). Every text goes in with textContent.
 */
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var BUTTONS = ["sensible-yes", "sensible-no", "specific-yes", "specific-no", "change-first"];

  var turn = ItemPage.turn;

  function render(v) {
    var text = v.text, step = v.item.step;
    $("progress").textContent = text.progress;
    $("intro-text").textContent = text.intro;
    $("intro").hidden = v.position !== 1;
    $("source").textContent = text.source;
    $("source").hidden = !text.source;
    $("q1-text").textContent = text.sensible;
    $("q1-help").textContent = text.sensible_help;
    $("q2-text").textContent = text.specific;
    $("q2-help").textContent = text.specific_help;
    $("step-note").textContent = text.step;
    BUTTONS.forEach(function (id) { $(id).textContent = text[id.replace("-", "_")]; });
    $("reply-who").textContent = text.response;
    var box = $("context");
    box.textContent = "";
    v.item.context.forEach(function (t) { box.appendChild(turn(t, text)); });
    $("reply").textContent = v.item.reply;
    $("q2").hidden = step !== 2;
    var busy = ItemPage.busy();
    BUTTONS.forEach(function (id) { $(id).disabled = busy; });
    $("sensible-yes").disabled = busy || step === 2;
    $("sensible-no").disabled = busy || step === 2;
    document.body.setAttribute("data-step", String(step));
  }

  $("sensible-no").addEventListener("click", function () { ItemPage.send({ sensible: false, specific: null }); });
  $("sensible-yes").addEventListener("click", function () { ItemPage.send({ step: 2 }); });
  $("change-first").addEventListener("click", function () { ItemPage.send({ step: 1 }); });
  $("specific-yes").addEventListener("click", function () { ItemPage.send({ sensible: true, specific: true }); });
  $("specific-no").addEventListener("click", function () { ItemPage.send({ sensible: true, specific: false }); });
  ItemPage.start({ render: render });
})();
