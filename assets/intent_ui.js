// Composer keys, auto-scroll, running times and timeline jumps. Plain DOM code:
// nothing here touches app state.
(function () {
  // Enter sends, Shift+Enter adds a line (IME composition is left alone).
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (!target || target.getAttribute("data-testid") !== "chat-input") return;
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    var form = target.form;
    if (form && target.value.trim()) form.requestSubmit();
  });

  // Follow new content only while the reader is at the bottom; scrolling up stops it.
  var pinned = true;
  function scroller() { return document.getElementById("iu-messages"); }
  document.addEventListener("scroll", function (event) {
    var el = scroller();
    if (event.target !== el) return;
    pinned = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
  }, true);
  // Labels grow inside fixed-height lines, so only added nodes can change the height:
  // watch childList alone and scroll at most once per frame.
  var queued = false;
  new MutationObserver(function () {
    if (queued || !pinned) return;
    queued = true;
    requestAnimationFrame(function () {
      queued = false;
      var el = scroller();
      if (el && pinned) el.scrollTop = el.scrollHeight;
    });
  }).observe(document.documentElement, { childList: true, subtree: true });

  // Running times: every element with a start and no end counts up from the start
  // (ms epoch), so an in-flight call ticks with no push per tick. The format mirrors
  // `intent_ui.core.display.format_elapsed`, so the time reads the same when it settles.
  // Reduced motion does not stop it: a clock is information, not animation.
  function formatElapsed(ms) {
    if (!(ms >= 0) || ms === Infinity) ms = 0;
    var tenths = Math.floor(ms / 100);
    if (tenths < 600) return Math.floor(tenths / 10) + "." + (tenths % 10) + "s";
    var seconds = Math.floor(ms / 1000);
    function two(n) { return (n < 10 ? "0" : "") + n; }
    if (seconds < 3600) return Math.floor(seconds / 60) + "m " + two(seconds % 60) + "s";
    return Math.floor(seconds / 3600) + "h " + two(Math.floor((seconds % 3600) / 60)) + "m";
  }
  function tick() {
    // Timestamps come from the server's clock; the page learns the offset on load.
    var now = Date.now() + (window.iuClockOffset || 0);
    var running = document.querySelectorAll("[data-started-at]:not([data-settled-at])");
    for (var i = 0; i < running.length; i++) {
      var started = Number(running[i].getAttribute("data-started-at"));
      if (!started) continue;
      var text = formatElapsed(now - started);
      if (running[i].textContent !== text) running[i].textContent = text;
    }
  }
  setInterval(tick, 100);
  // A new running time shows at once rather than at the next interval (once per frame).
  var tickQueued = false;
  new MutationObserver(function () {
    if (tickQueued) return;
    tickQueued = true;
    requestAnimationFrame(function () { tickQueued = false; tick(); });
  }).observe(document.documentElement, { childList: true, subtree: true });

  // Keyboard focus on a card's line survives the card being rendered anew: when a turn
  // ends, its message moves from the live view to the history as new elements, and a
  // reader who was on a card (say, about to press Enter) stays on that card. Only a
  // focus the page lost with its element is restored; a click elsewhere forgets it.
  var focusedHead = null;
  document.addEventListener("focusin", function (event) {
    var target = event.target;
    var onHead = target && target.classList && target.classList.contains("iu-card-head");
    focusedHead = onHead && target.closest('[data-testid="tool-call"]') ? target : null;
  });
  document.addEventListener("pointerdown", function () { focusedHead = null; }, true);
  new MutationObserver(function () {
    if (!focusedHead || focusedHead.isConnected) return;
    var active = document.activeElement;
    if (active && active !== document.body) { focusedHead = null; return; }
    var card = focusedHead.closest('[data-testid="tool-call"]');
    var id = card ? card.getAttribute("data-call-id") : null;
    var selector = '[data-testid="tool-call"][data-call-id="' + CSS.escape(id || "") + '"] .iu-card-head';
    var again = id ? document.querySelector(selector) : null;
    focusedHead = null;
    if (again) again.focus({ preventScroll: true });
  }).observe(document.documentElement, { childList: true, subtree: true });

  // A timeline mark opens its card on the server; once the card is on the page (its
  // group may have been closed) scroll it into view and move focus to it.
  document.addEventListener("click", function (event) {
    var mark = event.target && event.target.closest
      ? event.target.closest('[data-testid="timeline-mark"]') : null;
    if (!mark) return;
    var id = mark.getAttribute("data-call-id") || "";
    var selector = '[data-testid="tool-call"][data-call-id="' + CSS.escape(id) + '"]';
    var frames = 0;
    (function reveal() {
      var card = document.querySelector(selector);
      var head = card && card.querySelector(".iu-card-head");
      var opened = head && (head.tagName !== "BUTTON" || head.getAttribute("aria-expanded") === "true");
      if (card && (opened || frames > 60)) {
        pinned = false;  // the reader chose this card: stop following the bottom
        card.scrollIntoView({ block: "center" });
        if (head && head.tagName === "BUTTON") head.focus({ preventScroll: true });
        return;
      }
      if (frames++ < 240) requestAnimationFrame(reveal);
    })();
  });
})();
