/* Per-turn evaluation page: chat on the left, the current turn's candidate replies on the right.
 *
 * The server holds the dialogue and the candidates; this page shows the views it sends and
 * sends back only positions, "none of these", the worker's own text and a reason, each as a
 * MephistoLive action (resent until a view acknowledges it; the server stores it once). After a
 * reload or a reconnection the server's view brings back the conversation, the candidates and the
 * turn. All text from models or workers goes in with textContent.
 */
(function () {
  "use strict";
  var view = null, submitting = false;
  var $ = function (id) { return document.getElementById(id); };
  var SPEAKER = { human: "You", bot: "Partner" };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;  // text only, never markup
    return node;
  }
  function setStatus(text) { $("status").textContent = text; $("status").hidden = !text; }

  function sendPacket(data) {
    if (!MephistoLive.send(data)) return false;
    $("error").textContent = "";
    render(view);
    return true;
  }

  function onView(v) {
    var newTurn = !view || v.turn !== view.turn || v.status !== view.status;
    view = v;
    window.__perTurnView = v;  // for the simulated workers and tests
    if (newTurn) clearChoice();
    render(v);
  }

  function clearChoice() {
    $("none").checked = false; $("user-reply").value = ""; $("justification").value = "";
  }

  function introText(v) {
    var k = v.k || (v.onboarding ? v.onboarding.replies.length : 1);  // no model set yet during the practice turn
    var what = v.protocol === "soba" ? "pick the best reply (exactly one, even if none is good)"
      : v.protocol === "sm" ? "say whether the reply is an appropriate next turn"
      : "tick every reply that would be an acceptable next turn, or \"none of these\"" +
        (v.protocol === "sata_user" ? " and then write a better reply yourself" : "");
    return "Chat with a partner as you would with a new acquaintance. After each of your messages you " +
      "will see " + (k > 1 ? k + " possible replies" : "a possible reply") + ": " + what + ". " +
      "The chosen reply continues the conversation. Please do at least " + v.min_turns + " turns (at most " +
      v.max_turns + "); that takes about " + Math.max(5, Math.round(v.min_turns * 1.5)) + " minutes.";
  }

  function renderMessages(list) {
    var box = $("messages");
    box.textContent = "";
    list.forEach(function (m) {
      var who = m.seed ? "Opening (from a real conversation)" : SPEAKER[m.speaker] || m.speaker;
      var node = el("div", "msg " + m.speaker + (m.seed ? " seed" : ""));
      node.appendChild(el("span", "who", who));
      node.appendChild(document.createTextNode(m.text));
      box.appendChild(node);
    });
    box.scrollTop = box.scrollHeight;
  }

  function renderCards(items, v) {
    var box = $("candidates");
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
      card.appendChild(el("span", "label", "Reply"));
      card.appendChild(document.createTextNode(c.text));
      box.appendChild(card);
      if (v.label_mode === "ssa" && v.status === "chatting") { renderSsa(box, checked); return; }
      [["yes", "Appropriate"], ["no", "Not appropriate"]].forEach(function (opt) {
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
      label.appendChild(el("span", "label", "Reply " + (c.position + 1)));
      label.appendChild(document.createTextNode(c.text));
      box.appendChild(label);
    });
  }

  function yesNo(box, name, question, checked) {
    var group = el("fieldset", "yesno");
    group.id = name + "-group";
    group.appendChild(el("legend", null, question));
    [["yes", "Yes"], ["no", "No"]].forEach(function (opt) {
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

  function renderSsa(box, checked) {
    // Meena's order: sensibleness first; specificity is asked only of a reply that makes sense
    yesNo(box, "sensible", "Does the response make sense? (common sense, logic, consistent with the conversation)", checked);
    yesNo(box, "specific", "Is the response specific to the conversation? (not a reply that would fit almost " +
          "anything, like \"I don't know\" or \"ok\")", checked);
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
    $("intro-text").textContent = introText(v);
    $("intro").hidden = false;
    $("question").textContent = v.question;
    var busy = MephistoLive.busy();
    if (v.status === "complete" || v.status === "blocked" || v.status === "unavailable") { finish(v); return; }
    if (v.status === "survey") { renderSurvey(v); return; }
    $("survey").hidden = true;
    $("task").hidden = false;
    setStatus(v.error ? "" : busy ? "Sending…" : "");
    $("error").textContent = v.error || "";
    var onboarding = v.status === "onboarding";
    $("progress").textContent = onboarding ? "Practice turn" :
      "Turn " + Math.min(v.turns_done + 1, v.max_turns) + " (at least " + v.min_turns + ", at most " + v.max_turns + ")";
    if (onboarding) {
      renderMessages(v.onboarding.context.map(function (t, i) { return { speaker: i % 2 ? "bot" : "human", text: t }; }));
    } else {
      renderMessages(v.messages);
    }
    $("worker-context").hidden = !v.worker_context;
    $("worker-context").textContent = v.worker_context ? "Your role: " + v.worker_context.replace(/your persona: /g, "") : "";
    var items = onboarding ? v.onboarding.replies : v.candidates;
    var judging = !!(items && items.length);
    $("waiting").hidden = !v.waiting;
    $("choice").hidden = !judging;
    if (judging) renderCards(items, v);
    var sata = v.protocol === "sata_random" || v.protocol === "sata_user";
    $("none-label").hidden = !(judging && sata);
    $("justification-box").hidden = !(judging && !onboarding && v.justification !== "off");
    $("justification-label").textContent = v.justification === "required" ? "Why? (required)" : "Why? (optional)";
    $("composer").hidden = onboarding;
    $("send").disabled = busy || !v.can_send;
    $("message").disabled = busy || !v.can_send;
    if (v.first_message) { $("message").value = v.first_message; $("message").readOnly = true; }
    else { $("message").readOnly = false; }
    $("finish").hidden = onboarding;
    $("finish").disabled = busy || !v.can_finish;
    $("finish").textContent = v.turns_done >= v.min_turns ? "Finish the conversation"
      : "Finish (after " + v.min_turns + " turns)";
    $("submit-choice").disabled = busy;
    update();
  }

  function renderSurvey(v) {
    $("task").hidden = true;
    $("survey").hidden = false;
    $("progress").textContent = "Last step";
    $("survey-error").textContent = v.error || "";
    $("submit-survey").disabled = MephistoLive.busy();
    setStatus("");
    var box = $("survey-questions");
    if (box.getAttribute("data-built") === "yes") return;
    box.setAttribute("data-built", "yes");
    v.survey.questions.forEach(function (q) {
      var group = el("fieldset", "likert");
      group.appendChild(el("legend", null, q.text));
      q.scale.forEach(function (n) {
        var label = el("label");
        var input = el("input");
        input.type = "radio"; input.name = "q-" + q.key; input.value = String(n); input.id = "q-" + q.key + "-" + n;
        label.appendChild(input);
        label.appendChild(document.createTextNode(" " + n + " "));
        group.appendChild(label);
      });
      var reason = el("input");
      reason.type = "text"; reason.id = "reason-" + q.key; reason.placeholder = "Why? (optional)";
      group.appendChild(reason);
      box.appendChild(group);
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
    if (missing) { $("survey-error").textContent = "Please answer: " + missing; return; }
    var packet = { type: "survey", scores: scores, reasons: reasons };
    if (view.survey.personas) {
      var p = document.querySelector("input[name=persona]:checked");
      if (!p) { $("survey-error").textContent = "Please pick the description your partner was using."; return; }
      packet.persona = parseInt(p.value, 10);
    }
    sendPacket(packet);
  }

  function finish(v) {
    $("survey").hidden = true;
    $("task").hidden = true;
    $("intro").hidden = true;
    document.body.setAttribute("data-status", v.status);
    if (submitting) return;
    submitting = true;
    var done = v.status === "complete" ? "Thank you! Your conversation and choices are saved. You can close this page."
      : v.message;
    setStatus("Saving…");
    MephistoLive.submit({ status: v.status, turns: v.turns_done }).then(function () {
      setStatus(done);
      document.body.setAttribute("data-finished", "true");
    }, function () { submitting = false; setStatus("Could not reach the server; please retry in a moment."); });
  }

  function onChoice(ev) {
    ev.preventDefault();
    if (!view || MephistoLive.busy()) return;
    var picked = [], none = false;
    if (view.label_mode === "ssa" && view.status === "chatting") {
      var sens = document.querySelector("input[name=sensible]:checked");
      var spec = document.querySelector("input[name=specific]:checked");
      if (!sens || (sens.value === "yes" && !spec)) {
        $("error").textContent = "Please answer whether the response makes sense and, if so, whether it is specific.";
        return;
      }
      sendPacket({ type: "choice", turn: view.turn, sensible: sens.value === "yes",
                   specific: sens.value === "yes" && spec.value === "yes", justification: $("justification").value });
      return;
    }
    if (view.protocol === "sm") {
      var a = document.querySelector("input[name=appropriate]:checked");
      if (!a) { $("error").textContent = "Please say whether the reply is appropriate."; return; }
      if (a.value === "yes") picked = [0]; else none = true;
    } else {
      Array.prototype.forEach.call(document.querySelectorAll("input[name=pick]:checked"),
                                   function (i) { picked.push(parseInt(i.value, 10)); });
      none = $("none").checked;
      if (view.protocol === "soba" && picked.length !== 1) { $("error").textContent = "Please pick exactly one reply."; return; }
      if (view.protocol !== "soba" && !picked.length && !none) {
        $("error").textContent = "Please tick the acceptable replies, or \"none of these\"."; return;
      }
    }
    if (view.status === "onboarding") { sendPacket({ type: "onboarding", picked: picked, none: none }); return; }
    sendPacket({ type: "choice", turn: view.turn, picked: picked, none: none,
                 user_reply: $("user-reply").value, justification: $("justification").value });
  }

  function onSend(ev) {
    ev.preventDefault();
    var text = $("message").value.trim();
    if (!view || MephistoLive.busy() || !text) return;
    if (sendPacket({ type: "message", text: text })) $("message").value = "";
  }

  function start() {
    $("choice").addEventListener("submit", onChoice);
    $("survey-form").addEventListener("submit", onSurvey);
    $("composer").addEventListener("submit", onSend);
    $("message").addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && !ev.shiftKey) { onSend(ev); }
    });
    $("none").addEventListener("change", update);
    $("finish").addEventListener("click", function () { if (!MephistoLive.busy()) sendPacket({ type: "finish" }); });
    MephistoLive.loadTitle($("title"));
    MephistoLive.start({
      onView: onView,
      onUnavailable: function (reason) {
        $("task").hidden = true; setStatus(reason); document.body.setAttribute("data-unavailable", "true");
      },
      onStatus: function (s) {
        if (["expired", "timeout", "disconnect", "returned", "rejected"].indexOf(s) >= 0 && !submitting) {
          $("task").hidden = true;
          setStatus("This task is no longer available (" + s + "). Every turn you judged is saved.");
        }
      }
    }).then(function (r) {
      if (r.preview) setStatus("Preview: accept the task to start.");
      if (r.unavailable) { setStatus(r.unavailable); document.body.setAttribute("data-unavailable", "true"); }
    }).catch(function () { setStatus("Could not reach the task server; please reload the page."); });
  }

  start();
})();
