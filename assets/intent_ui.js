// Composer keys, auto-scroll, running times, timeline jumps, the narrow screen's menu,
// copy buttons and keyboard shortcuts. Plain DOM code: nothing here touches app state.
(function () {
  // Enter sends, Shift+Enter adds a line (IME composition is left alone); in a message
  // being edited, Enter sends it again and Escape leaves it as it was.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var testid = target && target.getAttribute ? target.getAttribute("data-testid") : null;
    if (testid !== "chat-input" && testid !== "edit-message-input") return;
    if (event.isComposing) return;
    if (testid === "edit-message-input" && event.key === "Escape") {
      var cancel = target.form && target.form.querySelector('[data-testid="edit-cancel"]');
      if (cancel) { event.preventDefault(); cancel.click(); }
      return;
    }
    if (event.key !== "Enter" || event.shiftKey) return;
    event.preventDefault();
    var form = target.form;
    if (form && target.value.trim()) form.requestSubmit();
  });
  // An edit left as it was gives the focus back to the message's Edit button, once the
  // page shows it again (the server answers the cancel).
  document.addEventListener("click", function (event) {
    var cancel = event.target && event.target.closest
      ? event.target.closest('[data-testid="edit-cancel"]') : null;
    var form = cancel && cancel.closest("form");
    var id = form && form.getAttribute("data-message-id");
    if (!id) return;
    var frames = 0;
    (function refocus() {
      var turn = document.querySelector('.iu-user-turn[data-message-id="' + CSS.escape(id) + '"]');
      var edit = turn && turn.querySelector('[data-testid="edit-message"]');
      if (edit) { edit.focus(); return; }
      if (++frames < 180) requestAnimationFrame(refocus);
    })();
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

  // Narrow screens: the menu button opens the sidebar as a drawer (CSS shows both only
  // there). Opening focuses the drawer's first control and makes the chat behind it
  // inert, so Tab stays in the drawer; its close button, Escape, a tap on the scrim, or
  // choosing a conversation (or New chat) closes it, and focus returns to the menu
  // button when it was inside the drawer. The open state is the shell's `data-menu`,
  // which React does not render, so a re-render leaves it alone.
  var MENU = '[data-testid="menu-toggle"]';
  function shell() { return document.querySelector(".iu-shell"); }
  function menuOpen() { var s = shell(); return !!s && s.getAttribute("data-menu") === "open"; }
  function setMenu(open) {
    var s = shell();
    var toggle = document.querySelector(MENU);
    if (!s) return;
    var drawer = document.getElementById("iu-sidebar");
    var hadFocus = drawer && drawer.contains(document.activeElement);
    s.setAttribute("data-menu", open ? "open" : "closed");
    if (toggle) toggle.setAttribute("aria-expanded", open ? "true" : "false");
    var main = s.querySelector(".iu-main");
    if (main) main.inert = open;
    if (open && drawer) {
      var first = drawer.querySelector("button, a[href], input");
      if (first) first.focus({ preventScroll: true });
    } else if (!open && hadFocus && toggle) {
      toggle.focus({ preventScroll: true });
    }
  }
  document.addEventListener("click", function (event) {
    var target = event.target && event.target.closest ? event.target : null;
    if (!target) return;
    if (target.closest(MENU)) { setMenu(!menuOpen()); return; }
    if (!menuOpen()) return;
    if (target.closest(".iu-scrim, .iu-menu-close") ||
        target.closest('[data-testid="conversation-title"], [data-testid="new-chat"]')) {
      setMenu(false);
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && menuOpen()) setMenu(false);
  });
  // A window widened past the drawer's width shows the sidebar in place: close the
  // drawer, or the chat would stay inert. The width mirrors intent_ui.css.
  var narrow = window.matchMedia("(max-width: 720px)");
  narrow.addEventListener("change", function () { if (!narrow.matches && menuOpen()) setMenu(false); });

  // Copy buttons (components/copy.py). A code block's button copies the code as the
  // block shows it. A reply's button copies the reply's markdown, which is not on the
  // page: React hands it to `iuCopyReply` during the same click, after the capture
  // listener here has noted which button it was. For two seconds the button shows a
  // check and "Copied" and is named so; the status region says it for screen readers.
  var copyClicked = null;
  function labelText(id) { var el = document.getElementById(id); return el ? el.textContent : ""; }
  function writeClipboard(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    // Plain http from another machine has no clipboard API; the older command still works.
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      var done = false;
      try { done = document.execCommand("copy"); } catch (error) { done = false; }
      area.remove();
      if (done) resolve(); else reject(new Error("The browser refused to copy."));
    });
  }
  function showCopied(button, ok) {
    var said = labelText(ok ? "iu-label-copied" : "iu-label-copy-failed");
    var status = document.getElementById("iu-copy-status");
    if (status) status.textContent = said;
    if (!button || !ok) return;
    if (!button.hasAttribute("data-label")) {
      button.setAttribute("data-label", button.getAttribute("aria-labelledby") || "");
    }
    var note = button.querySelector(".iu-copy-note");
    button.setAttribute("data-copied", "true");
    button.setAttribute("aria-labelledby", "iu-label-copied");
    if (note) note.textContent = said;
    clearTimeout(button.iuCopyTimer);
    button.iuCopyTimer = setTimeout(function () {
      button.removeAttribute("data-copied");
      button.setAttribute("aria-labelledby", button.getAttribute("data-label"));
      if (note) note.textContent = "";
      if (status && status.textContent === said) status.textContent = "";
    }, 2000);
  }
  function copyText(text, button) {
    writeClipboard(text).then(
      function () { showCopied(button, true); },
      function () { showCopied(button, false); });
  }
  document.addEventListener("click", function (event) {
    var target = event.target && event.target.closest ? event.target : null;
    copyClicked = target ? target.closest('[data-testid="copy-reply"]') : null;
    var button = target ? target.closest('[data-testid="copy-code"]') : null;
    if (!button) return;
    var block = button.closest(".iu-code");
    var code = block ? block.querySelector("pre code") || block.querySelector("pre") : null;
    copyText(code ? code.textContent : "", button);
  }, true);
  window.iuCopyReply = function (text) {
    var button = copyClicked;
    copyClicked = null;
    copyText(String(text == null ? "" : text), button);
  };

  // Keyboard shortcuts, listed in the `?` dialog (components/shortcuts.py mirrors this):
  // Ctrl/Cmd+Shift+O new chat and Shift+Esc the message box work anywhere, as they type
  // nothing; Esc stops a running turn unless a dialog, the menu or a text field other
  // than the message box has it (Esc clears a search box); `?` opens the dialog only
  // outside text fields. Listening in the capture phase sees the menu before its own
  // Escape handler closes it.
  var DIALOG = '[data-testid="shortcuts-dialog"]';
  function typingIn(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  function openShortcuts() {
    var dialog = document.querySelector(DIALOG);
    if (dialog && !dialog.open) dialog.showModal();
  }
  document.addEventListener("click", function (event) {
    var target = event.target && event.target.closest ? event.target : null;
    if (!target) return;
    if (target.closest('[data-testid="shortcuts-button"]')) openShortcuts();
    var close = target.closest('[data-testid="shortcuts-close"]');
    if (close) close.closest("dialog").close();
  });
  document.addEventListener("keydown", function (event) {
    if (event.isComposing || event.defaultPrevented) return;
    if (!document.querySelector('[data-testid="chat-page"]')) return;
    if (document.querySelector("dialog[open]")) return;  // Esc closes it; Tab stays in it
    var key = event.key;
    var command = event.ctrlKey || event.metaKey;
    if (command && event.shiftKey && !event.altKey && (key === "o" || key === "O")) {
      var newChat = document.querySelector('[data-testid="new-chat"]');
      if (newChat) { event.preventDefault(); newChat.click(); }
      return;
    }
    if (command || event.altKey) return;
    if (key === "Escape" && event.shiftKey) {
      var input = document.querySelector('[data-testid="chat-input"]');
      if (!input) return;
      event.preventDefault();
      if (menuOpen()) setMenu(false);
      input.focus();
      return;
    }
    if (key === "Escape") {
      var stop = document.querySelector('[data-testid="stop-button"]');
      var target = event.target;
      if (!stop || menuOpen()) return;
      if (typingIn(target) && target.getAttribute("data-testid") !== "chat-input") return;
      event.preventDefault();
      stop.click();
      return;
    }
    if (key === "?" && !typingIn(event.target)) {
      event.preventDefault();
      openShortcuts();
    }
  }, true);
})();
