/* Per-turn evaluation page: chat on the left, the current turn's candidate replies on the right.
 *
 * The server holds the dialogue and the candidates; this page shows the views it sends and
 * sends back only positions, "none of these", the worker's own text and a reason, each as a
 * MephistoLive action (resent until a view acknowledges it; the server stores it once). After a
 * reload or a reconnection the server's view brings back the conversation, the candidates and the
 * turn. All text from models or workers goes in with textContent. The page has no
 * wording of its own: every instruction, label and notice is in the view's ``text`` (rendered by
 * the server from the task's configuration, mephisto_tasks/per_turn/texts.py).
 */
(function () {
  "use strict";
  var view = null, submitting = false, messageAction = null, messageError = "";
  var $ = function (id) { return document.getElementById(id); };

  var el = MephistoLive.el;
  // the status line keeps its space when empty ("Sending…" never pushes the page down)
  function setStatus(text) { $("status").textContent = text; $("status").style.visibility = text ? "visible" : "hidden"; }
  function say(v, key) { return (v && v.text && v.text[key]) || ""; }  // every word comes from the server

  // boxes: the text boxes whose words the action carries (their drafts go once it is stored)
  function sendPacket(data, boxes) {
    if (!MephistoLive.send(data, boxes)) return false;
    $("error").textContent = "";
    render(view);
    return true;
  }

  function onView(v) {
    var newTurn = !view || v.turn !== view.turn || v.status !== view.status;
    var newStep = newTurn || !!v.waiting !== !!view.waiting;
    view = v;
    window.__perTurnView = v;  // for the simulated workers and tests
    if (newTurn) clearChoice();
    render(v);
    if (newStep) reveal(v);
  }

  // the message as the server counts it (runs of white space are one space)
  function messageLength() { return $("message").value.trim().split(/\s+/).join(" ").length; }
  function tooLong() { return !!(view && view.max_message_chars && messageLength() > view.max_message_chars); }

  // beside the box: how much it holds against the server's limit, or why it was refused (a refusal
  // by the server of this page's last message shows here too, never far from the box)
  function noteMessage() {
    var v = view, note = $("message-note");
    if (!v) return;
    var words = { limit: String(v.max_message_chars), length: String(messageLength()) };
    var fill = function (t) { return t.replace("{limit}", words.limit).replace("{length}", words.length); };
    var text = messageError || (tooLong() ? fill(say(v, "too_long")) :
               $("message").value.trim() && v.max_message_chars ? fill(say(v, "message_count")) : "");
    note.textContent = text;
    note.className = messageError || tooLong() ? "over" : "";
  }

  function clearChoice() {
    $("none").checked = false; $("user-reply").value = ""; $("justification").value = "";
  }

  // A view that repeats what is on the page (the answer to a resend, a reconnection) leaves the
  // messages and cards in place: no flicker, the worker's scroll and ticks stay.
  function unchanged(box, key) {
    if (box.__key === key) return true;
    box.__key = key;
    return false;
  }

  function renderMessages(list) {
    var box = $("messages");
    if (unchanged(box, JSON.stringify(list))) return;
    box.textContent = "";
    list.forEach(function (m) {
      var who = say(view, m.seed ? "opening" : m.speaker === "human" ? "you" : "partner") || m.speaker;
      var node = el("div", "msg " + m.speaker + (m.seed ? " seed" : ""));
      node.appendChild(el("span", "who", who));
      node.appendChild(document.createTextNode(m.text));
      box.appendChild(node);
    });
    box.scrollTop = box.scrollHeight;
  }

  function renderCards(items, v) {
    var ssa = v.label_mode === "ssa";  // Meena's two questions, in the practice turn too
    var box = $("candidates");
    if (unchanged(box, JSON.stringify([v.status, v.turn, v.protocol, v.label_mode, items, v.text]))) return;
    var checked = {};  // a re-render of the same turn keeps what the worker ticked; a new turn starts empty
    var key = v.status + ":" + v.turn;
    if (box.getAttribute("data-turn") === key) {
      Array.prototype.forEach.call(box.querySelectorAll("input"), function (i) { checked[i.id] = i.checked; });
    }
    box.setAttribute("data-turn", key);
    box.textContent = "";
    if (v.protocol === "sm") {
      var c = items[0];
      var card = el("div", "card");
      card.appendChild(el("span", "label", say(v, "reply_label").replace("{n}", "1")));
      card.appendChild(document.createTextNode(c.text));
      box.appendChild(card);
      if (ssa) { renderSsa(box, checked, v); return; }
      [["yes", say(v, "appropriate_yes")], ["no", say(v, "appropriate_no")]].forEach(function (opt) {
        var label = el("label", "card");
        var input = el("input");
        input.type = "radio"; input.name = "appropriate"; input.value = opt[0]; input.id = "appropriate-" + opt[0];
        input.checked = !!checked[input.id];
        label.appendChild(input);
        label.appendChild(document.createTextNode(opt[1]));
        box.appendChild(label);
      });
      return;
    }
    items.forEach(function (c) {
      var label = el("label", "card");
      label.setAttribute("data-position", c.position);
      var input = el("input");
      input.type = v.protocol === "soba" ? "radio" : "checkbox";
      input.name = "pick"; input.value = String(c.position); input.id = "pick-" + c.position;
      input.checked = !!checked[input.id];
      input.addEventListener("change", function () { if (input.checked) $("none").checked = false; update(); });
      label.appendChild(input);
      label.appendChild(el("span", "label", say(v, "reply_label").replace("{n}", String(c.position + 1))));
      label.appendChild(document.createTextNode(c.text));
      box.appendChild(label);
    });
  }

  function yesNo(box, name, question, checked) {
    var group = el("fieldset", "yesno");
    group.id = name + "-group";
    group.appendChild(el("legend", null, question));
    [["yes", say(view, "yes")], ["no", say(view, "no")]].forEach(function (opt) {
      var label = el("label", "card");
      var input = el("input");
      input.type = "radio"; input.name = name; input.value = opt[0]; input.id = name + "-" + opt[0];
      input.checked = !!checked[input.id];
      input.addEventListener("change", update);
      label.appendChild(input);
      label.appendChild(document.createTextNode(opt[1]));
      group.appendChild(label);
    });
    box.appendChild(group);
  }

  function renderSsa(box, checked, v) {
    // Meena's order: sensibleness first; specificity is asked only of a reply that makes sense
    yesNo(box, "sensible", say(v, "ssa_sensible"), checked);
    yesNo(box, "specific", say(v, "ssa_specific"), checked);
  }

  function update() {
    if ($("specific-group")) {
      var sensible = document.querySelector("input[name=sensible]:checked");
      $("specific-group").hidden = !(sensible && sensible.value === "yes");
    }
    var v = view;
    var sata = v && (v.protocol === "sata_random" || v.protocol === "sata_user");
    $("user-reply-box").hidden = !(v && v.status === "chatting" && v.protocol === "sata_user" && $("none").checked);
    if (sata && $("none").checked) {
      Array.prototype.forEach.call(document.querySelectorAll("input[name=pick]"), function (i) { i.checked = false; });
    }
  }

  function render(v) {
    if (!v) return;
    $("intro-text").textContent = say(v, "intro");
    $("intro").hidden = false;
    [["intro-heading", "intro_heading"], ["message-label", "message_label"], ["send", "send"],
     ["submit-choice", "submit"], ["survey-heading", "survey_heading"], ["submit-survey", "submit"]]
      .forEach(function (p) { $(p[0]).textContent = say(v, p[1]); });
    $("message").placeholder = say(v, "message_placeholder");
    $("question").textContent = say(v, "question");
    $("progress").textContent = say(v, "progress");
    $("assignment").textContent = say(v, "assignment");
    var busy = MephistoLive.busy();
    if (v.status === "complete" || v.status === "blocked" || v.status === "unavailable") { finish(v); return; }
    if (v.status === "survey") { renderSurvey(v); return; }
    $("survey").hidden = true;
    $("task").hidden = false;
    setStatus(v.error ? "" : busy ? MephistoLive.say("sending") : "");
    var aboutMessage = !!(v.error && messageAction && v.ack === messageAction);
    messageError = aboutMessage ? v.error : v.ack === messageAction ? "" : messageError;
    $("error").textContent = aboutMessage ? "" : v.error || "";
    var onboarding = v.status === "onboarding";
    $("notice").textContent = say(v, "notice");
    $("notice").hidden = !say(v, "notice");
    if (onboarding) {
      renderMessages(v.onboarding.context.map(function (t, i) { return { speaker: i % 2 ? "bot" : "human", text: t }; }));
    } else {
      renderMessages(v.messages);
    }
    $("worker-context").hidden = onboarding || !say(v, "role");
    $("worker-context").textContent = say(v, "role");
    var items = onboarding ? v.onboarding.replies : v.candidates;
    var judging = !!(items && items.length);
    $("waiting").hidden = !v.waiting;
    $("waiting").textContent = say(v, "waiting");
    $("choice").hidden = !judging;
    if (judging) renderCards(items, v);
    var sata = v.protocol === "sata_random" || v.protocol === "sata_user";
    $("none-label").hidden = !(judging && sata);
    $("none-text").textContent = say(v, "none");
    $("user-reply-label").textContent = say(v, "user_reply");
    $("justification-box").hidden = !(judging && !onboarding && v.justification !== "off");
    $("justification-label").textContent = say(v, "justification");
    $("composer").hidden = onboarding;
    $("send").disabled = busy || !v.can_send;
    $("message").disabled = busy || !v.can_send;
    // unsent words survive a reload (and show in a second tab), each on its own turn only: the message
    // while it can be sent, the own reply and the reason while this turn's replies are judged
    MephistoLive.draft($("message"), v.status === "chatting" && v.can_send && !v.first_message
      ? "turn:" + v.turns_done : null);
    var judged = v.status === "chatting" && v.turn !== null && v.turn !== undefined ? "turn:" + v.turn : null;
    MephistoLive.draft($("user-reply"), judged);
    MephistoLive.draft($("justification"), judged);
    if (v.first_message) { $("message").value = v.first_message; $("message").readOnly = true; }
    else { $("message").readOnly = false; }
    noteMessage();
    $("finish").hidden = onboarding;
    $("finish").disabled = busy || !v.can_finish;
    $("finish").textContent = say(v, "finish");
    $("submit-choice").disabled = busy;
    update();
  }

  // a new step brings its controls into view: the replies to judge, or the message box (no hunting)
  function reveal(v) {
    if (!v || ["chatting", "onboarding"].indexOf(v.status) < 0) return;
    var judging = v.status === "onboarding" || (v.candidates && v.candidates.length);
    var target = judging ? $("judge-column") : v.waiting ? $("waiting") : $("composer");
    if (target && target.scrollIntoView) target.scrollIntoView({ block: judging ? "start" : "nearest" });
  }

  function renderSurvey(v) {
    $("task").hidden = true;
    $("survey").hidden = false;
    $("survey-intro").textContent = say(v, "survey_intro");
    $("persona-question").textContent = say(v, "persona_question");
    $("survey-error").textContent = v.error || "";
    $("submit-survey").disabled = MephistoLive.busy();
    setStatus("");
    var box = $("survey-questions");
    if (box.getAttribute("data-built") === "yes") return;
    box.setAttribute("data-built", "yes");
    v.survey.questions.forEach(function (q) {
      var group = el("fieldset", "likert");
      group.appendChild(el("legend", null, q.text));
      q.scale.forEach(function (point) {  // ConvAI2's anchors: every point says what it means
        var label = el("label", "anchor");
        var input = el("input");
        input.type = "radio"; input.name = "q-" + q.key; input.value = String(point.value);
        input.id = "q-" + q.key + "-" + point.value;
        label.appendChild(input);
        label.appendChild(document.createTextNode(point.value + " - " + point.label));
        group.appendChild(label);
      });
      var reason = el("input");
      reason.type = "text"; reason.id = "reason-" + q.key; reason.placeholder = say(v, "reason_optional");
      group.appendChild(reason);
      box.appendChild(group);
      MephistoLive.draft(reason, "survey");  // an unsent reason survives a reload
    });
    var personas = v.survey.personas;
    $("survey-personas").hidden = !personas;
    if (personas) {
      personas.forEach(function (text, i) {
        var label = el("label", "card");
        var input = el("input");
        input.type = "radio"; input.name = "persona"; input.value = String(i); input.id = "persona-" + i;
        label.appendChild(input);
        label.appendChild(document.createTextNode(text));
        $("persona-options").appendChild(label);
      });
    }
  }

  function onSurvey(ev) {
    ev.preventDefault();
    if (!view || MephistoLive.busy() || view.status !== "survey") return;
    var scores = {}, reasons = {}, missing = null;
    view.survey.questions.forEach(function (q) {
      var picked = document.querySelector("input[name=q-" + q.key + "]:checked");
      if (!picked && !missing) missing = q.text;
      if (picked) scores[q.key] = parseInt(picked.value, 10);
      reasons[q.key] = $("reason-" + q.key).value;
    });
    if (missing) { $("survey-error").textContent = say(view, "survey_missing").replace("{q}", missing); return; }
    var packet = { type: "survey", scores: scores, reasons: reasons };
    if (view.survey.personas) {
      var p = document.querySelector("input[name=persona]:checked");
      if (!p) { $("survey-error").textContent = say(view, "persona_missing"); return; }
      packet.persona = parseInt(p.value, 10);
    }
    sendPacket(packet, view.survey.questions.map(function (q) { return $("reason-" + q.key); }));
  }

  function finish(v) {
    $("survey").hidden = true;
    $("task").hidden = true;
    $("intro").hidden = true;
    document.body.setAttribute("data-status", v.status);
    if (submitting) return;
    submitting = true;
    MephistoLive.submitPage({ status: v.status, turns: v.turns_done }, say(v, "done"), setStatus)
      .then(function (saved) { submitting = saved; });
  }

  function onChoice(ev) {
    ev.preventDefault();
    if (!view || MephistoLive.busy()) return;
    var picked = [], none = false;
    if (view.label_mode === "ssa") {
      var sens = document.querySelector("input[name=sensible]:checked");
      var spec = document.querySelector("input[name=specific]:checked");
      if (!sens || (sens.value === "yes" && !spec)) { $("error").textContent = say(view, "ssa_missing"); return; }
      var labels = { sensible: sens.value === "yes", specific: sens.value === "yes" && spec.value === "yes" };
      if (view.status === "onboarding") {
        sendPacket({ type: "onboarding", sensible: labels.sensible, specific: labels.specific });
        return;
      }
      sendPacket({ type: "choice", turn: view.turn, sensible: labels.sensible, specific: labels.specific,
                   justification: $("justification").value }, [$("justification")]);
      return;
    }
    if (view.protocol === "sm") {
      var a = document.querySelector("input[name=appropriate]:checked");
      if (!a) { $("error").textContent = say(view, "say_appropriate"); return; }
      if (a.value === "yes") picked = [0]; else none = true;
    } else {
      Array.prototype.forEach.call(document.querySelectorAll("input[name=pick]:checked"),
                                   function (i) { picked.push(parseInt(i.value, 10)); });
      none = $("none").checked;
      if (view.protocol === "soba" && picked.length !== 1) { $("error").textContent = say(view, "pick_one"); return; }
      if (view.protocol !== "soba" && !picked.length && !none) { $("error").textContent = say(view, "pick_some"); return; }
    }
    if (view.status === "onboarding") { sendPacket({ type: "onboarding", picked: picked, none: none }); return; }
    sendPacket({ type: "choice", turn: view.turn, picked: picked, none: none,
                 user_reply: $("user-reply").value, justification: $("justification").value },
               [$("user-reply"), $("justification")]);
  }

  function onSend(ev) {
    ev.preventDefault();
    var text = $("message").value.trim();
    if (!view || MephistoLive.busy()) return;
    if (!text) { $("error").textContent = say(view, "empty_message"); $("message").focus(); return; }
    if (tooLong()) { noteMessage(); $("message").focus(); return; }  // refused here; the words stay in the box
    // the box keeps the words until the server has stored them (the next step empties it); a refusal
    // leaves them there to shorten
    var packet = { type: "message", text: text };
    messageError = "";
    if (sendPacket(packet, [$("message")])) messageAction = packet.action_id;
  }

  function start() {
    $("choice").addEventListener("submit", onChoice);
    $("survey-form").addEventListener("submit", onSurvey);
    $("composer").addEventListener("submit", onSend);
    $("message").addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && !ev.shiftKey) { onSend(ev); }
    });
    $("none").addEventListener("change", update);
    $("message").addEventListener("input", function () { messageError = ""; noteMessage(); });
    $("finish").addEventListener("click", function () { if (!MephistoLive.busy()) sendPacket({ type: "finish" }); });
    MephistoLive.startPage({ onView: onView, setStatus: setStatus, ended: function () { return submitting; } });
  }

  start();
})();
