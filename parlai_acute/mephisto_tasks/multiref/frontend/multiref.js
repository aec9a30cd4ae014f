/* Multi-reference page: a context, then the worker's replies one by one (Enter or "Add reply"), with a
 * count of how many remain. Checked here (length, repeats) and again by the server. Key presses and
 * clicks are timed (browser clock, ms) and sent with each reply as client-reported timing data.
 * The page has no wording of its own: every line, the refusals checked here included, is in the
 * view's ``text`` (multiref/texts.py). Every text goes in with textContent.
 */
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var keys = [], clicks = [], shownAt = Date.now(), accepted = -1, lastPosition = null;

  function normalized(text) {
    return text.toLowerCase().replace(/\s+/g, " ").replace(/^[ .!?,;:'"]+|[ .!?,;:'"]+$/g, "");
  }

  var turn = ItemPage.turn;

  function render(v, isNew) {
    var item = v.item;
    if (isNew || v.position !== lastPosition || item.written.length !== accepted) {
      // a new context, or the last reply was stored: start the next reply afresh
      $("reply").value = "";
      keys = []; clicks = []; shownAt = Date.now();
      accepted = item.written.length;
      lastPosition = v.position;
    }
    // an unsent reply survives a reload (and shows in a second tab), for this context and reply number only
    MephistoLive.draft($("reply"), v.position + ":" + (item.written.length + 1));
    var text = v.text;
    $("progress").textContent = text.progress;
    $("intro-text").textContent = text.intro;
    $("intro").hidden = v.position !== 1;
    $("reply-label").textContent = text.label;
    $("reply").placeholder = text.placeholder;
    $("add").textContent = text.add;
    var box = $("context");
    box.textContent = "";
    item.context.forEach(function (t) { box.appendChild(turn(t, text)); });
    var list = $("written");
    list.textContent = "";
    item.written.forEach(function (text) {
      var li = document.createElement("li");
      li.textContent = text;
      list.appendChild(li);
    });
    $("remaining").textContent = text.remaining;
    $("reply").maxLength = v.max_reply_chars;
    var busy = ItemPage.busy();
    $("add").disabled = busy;
    $("reply").readOnly = busy;
    document.body.setAttribute("data-remaining", String(item.remaining));
  }

  function submit(via) {
    var v = window.__itemView;
    if (!v || !v.item || ItemPage.busy()) return;
    var text = $("reply").value.replace(/\s+/g, " ").trim();
    if (text.length < v.min_reply_chars) {
      $("error").textContent = v.text.too_short;
      return;
    }
    var mine = v.item.written.map(normalized);
    if (mine.indexOf(normalized(text)) >= 0) {
      $("error").textContent = v.text.repeat;
      return;
    }
    ItemPage.send({ index: v.item.written.length + 1, text: text,
                    timing: { keys: keys.slice(), clicks: clicks.slice(), shown: shownAt, submitted: Date.now(),
                              via: via } }, [$("reply")]);
  }

  $("reply").addEventListener("keydown", function (ev) {
    keys.push(Date.now());
    if (ev.key === "Enter") { ev.preventDefault(); submit("enter"); }
  });
  document.addEventListener("click", function () { clicks.push(Date.now()); }, true);
  $("composer").addEventListener("submit", function (ev) { ev.preventDefault(); submit("button"); });
  ItemPage.start({ render: render });
})();
