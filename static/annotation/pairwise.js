/*
 * The pairwise comparison page (templates/annotation/work/pair.html): keyboard-first choice between two
 * replies on top of a plain POST form (radio buttons) that also works without this script.
 *
 * Keys: 1 or ArrowLeft = the left reply (Reply A) is better, 2 or ArrowRight = the right one (Reply B),
 * 0 or t = a tie; Enter submits once something is chosen; s skips; b or Backspace goes back to the
 * previous answered pair; ? opens the instructions, Escape closes them. f (static/annotation/notes.js)
 * opens the comment / flag box under the pair; keys typed in that box never pick, submit, skip or go back.
 *
 * The seconds on the item are measured here and sent as the client's figure (the server measures its own);
 * time with the instructions open does not count. Kept apart from work.js, which serves the other tasks.
 */
(function () {
  "use strict";

  const root = document.querySelector("[data-pair-page]");
  const form = document.getElementById("answer-form");
  if (!root || !form) {
    return;
  }
  const message = document.getElementById("form-message");
  const dialog = document.getElementById("instructions");
  const skipForm = document.getElementById("skip-form");
  const notes = document.getElementById("item-notes");
  const backUrl = root.dataset.backUrl || "";
  const KEYS = { "1": "left", ArrowLeft: "left", "2": "right", ArrowRight: "right", "0": "tie", t: "tie" };
  let submitting = false;

  /* Reading time, paused while the instructions are open. */
  const started = performance.now();
  let pausedMs = 0;
  let pausedAt = null;
  function pause() {
    if (pausedAt === null) {
      pausedAt = performance.now();
    }
  }
  function resume() {
    if (pausedAt !== null) {
      pausedMs += performance.now() - pausedAt;
      pausedAt = null;
    }
  }
  function seconds() {
    const end = pausedAt === null ? performance.now() : pausedAt;
    return Math.max(0, (end - started - pausedMs) / 1000).toFixed(3);
  }

  function say(text) {
    if (message) {
      message.textContent = text;
    }
  }

  function radios() {
    return Array.from(form.querySelectorAll('input[name="choice"]'));
  }

  function chosen() {
    const checked = form.querySelector('input[name="choice"]:checked');
    return checked ? checked.value : "";
  }

  /* The chosen reply (or the tie) is highlighted; the radio button itself stays the source of truth. */
  function mark() {
    const value = chosen();
    form.querySelectorAll("[data-position]").forEach(function (box) {
      box.classList.toggle("chosen", box.dataset.position === value);
    });
  }

  function choose(value) {
    const radio = radios().find(function (input) {
      return input.value === value;
    });
    if (radio) {
      radio.checked = true;
      say("");
      mark();
    }
  }

  /* ---- instructions dialog ---- */
  function openInstructions() {
    if (!dialog || dialog.open || typeof dialog.showModal !== "function") {
      return;
    }
    pause();
    dialog.showModal();
  }
  function closeInstructions() {
    if (dialog.open) {
      dialog.close();
    }
    resume();
    if (document.activeElement instanceof HTMLElement) {
      document.activeElement.blur();
    }
  }
  if (dialog) {
    dialog.addEventListener("keydown", function (event) {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        closeInstructions();
      }
    });
    const closer = document.getElementById("close-instructions");
    if (closer) {
      closer.addEventListener("click", function (event) {
        event.preventDefault();
        closeInstructions();
      });
    }
    dialog.addEventListener("close", resume);
    const opener = document.getElementById("open-instructions");
    if (opener) {
      opener.addEventListener("click", function (event) {
        event.preventDefault();
        openInstructions();
      });
    }
  }

  /* ---- the answer ---- */
  form.noValidate = true;
  form.addEventListener("change", mark);
  form.addEventListener("submit", function (event) {
    if (submitting) {
      event.preventDefault();
      return;
    }
    if (!chosen()) {
      event.preventDefault();
      say("Choose the better reply first (1 or ← for Reply A, 2 or → for Reply B, 0 or t for a tie).");
      return;
    }
    form.elements.seconds.value = seconds();
    submitting = true;
  });

  /* Enter on a link or another form's button keeps its own meaning. */
  function isOtherControl(target) {
    if (dialog && dialog.contains(target)) {
      return false;
    }
    if (target instanceof HTMLAnchorElement) {
      return true;
    }
    return target instanceof HTMLButtonElement && target.form !== form;
  }

  document.addEventListener("keydown", function (event) {
    if ((dialog && dialog.open) || submitting) {
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    // notes.js keeps the box's keys to itself; this holds even if that script failed to load.
    if (notes && event.target instanceof Node && notes.contains(event.target)) {
      return;
    }
    if (event.key === "?") {
      event.preventDefault();
      openInstructions();
    } else if (Object.prototype.hasOwnProperty.call(KEYS, event.key)) {
      event.preventDefault(); // arrow keys would otherwise move between the radio buttons themselves
      choose(KEYS[event.key]);
    } else if (event.key === "Enter" && !isOtherControl(event.target)) {
      event.preventDefault();
      form.requestSubmit();
    } else if (event.key === "s" && skipForm) {
      event.preventDefault();
      submitting = true;
      skipForm.submit();
    } else if ((event.key === "b" || event.key === "Backspace") && backUrl) {
      event.preventDefault();
      submitting = true;
      window.location.href = backUrl;
    }
  });

  mark();
  if (dialog && dialog.dataset.autoshow) {
    openInstructions();
  }
})();
