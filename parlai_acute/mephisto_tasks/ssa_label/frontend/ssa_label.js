/* SSA labelling page: the context and B's response, then "Does the response make sense?" and, only
 * after "yes", "Is the response specific?". "No" to the first question sends the label at once
 * (a response that does not make sense is not specific). The page sends answers by the item's
 * position; the server holds the items. Every text goes in with textContent.
 */
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var step = 1;
  // "It makes sense" stores nothing yet (the label is both answers): the step is kept in this tab's
  // sessionStorage, so a reload comes back to the second question of the same item
  var STEP_KEY = "parlai-acute-ssa-step:" + window.location.search;
  function remember(position) {
    try { window.sessionStorage.setItem(STEP_KEY, JSON.stringify({ position: position, step: step })); } catch (e) {}
  }
  function remembered(position) {
    try {
      var saved = JSON.parse(window.sessionStorage.getItem(STEP_KEY) || "null");
      return saved && saved.position === position ? saved.step : 1;
    } catch (e) { return 1; }
  }

  function turn(t) {
    var node = document.createElement("div");
    node.className = "turn " + t.speaker;
    var who = document.createElement("span");
    who.className = "who";
    who.textContent = t.speaker;
    node.appendChild(who);
    node.appendChild(document.createTextNode(t.text));  // text only, never markup
    return node;
  }

  function render(v, isNew) {
    if (isNew) step = remembered(v.position);
    remember(v.position);
    $("progress").textContent = "Item " + v.position + " of " + v.n;
    $("q1-text").textContent = v.questions.sensible;
    $("q1-help").textContent = v.questions.sensible_help;
    $("q2-text").textContent = v.questions.specific;
    $("q2-help").textContent = v.questions.specific_help;
    var box = $("context");
    box.textContent = "";
    v.item.context.forEach(function (t) { box.appendChild(turn(t)); });
    $("reply").textContent = v.item.reply;
    $("q2").hidden = step !== 2;
    var busy = ItemPage.busy();
    ["sensible-yes", "sensible-no", "specific-yes", "specific-no", "change-first"].forEach(function (id) {
      $(id).disabled = busy;
    });
    $("sensible-yes").disabled = busy || step === 2;
    $("sensible-no").disabled = busy || step === 2;
    document.body.setAttribute("data-step", String(step));
  }

  function rerender() { if (window.__itemView) render(window.__itemView, false); }

  $("sensible-no").addEventListener("click", function () { ItemPage.send({ sensible: false, specific: null }); });
  $("sensible-yes").addEventListener("click", function () { step = 2; rerender(); });
  $("change-first").addEventListener("click", function () { step = 1; rerender(); });
  $("specific-yes").addEventListener("click", function () { ItemPage.send({ sensible: true, specific: true }); });
  $("specific-no").addEventListener("click", function () { ItemPage.send({ sensible: true, specific: false }); });
  ItemPage.start({ render: render });
})();
