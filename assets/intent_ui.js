// Composer keys and auto-scroll. Plain DOM code: nothing here touches app state.
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
})();
