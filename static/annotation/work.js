/*
 * Annotator pages (templates/annotation/work/*.html): keyboard-first rating, reference writing and
 * diversity judgment on top of plain POST forms that also work without this script.
 *
 * - Time on an item is measured here too and sent in the hidden "seconds" field (time with the
 *   instructions dialog open does not count); the server keeps it beside its own measure and never uses
 *   it for a flag. Key presses while a reference is typed go in "keystrokes": the server compares them
 *   with the visible length of the text to tell typed text from pasted or filled-in text.
 * - Scale points are picked by typing their number: "10" is 1 then 0 (the page waits a moment after
 *   "1" when a 10 exists). Sliders move with the arrow keys, PgUp/PgDn, Home/End, or a typed number.
 * - The checks run here mirror the server's (annotation/reference_rules.py), so a mistake is caught
 *   before the round trip; the server still decides.
 * - The qualification round (training.html) is a rating page of one question posting "value"; its
 *   feedback and result pages ("training-feedback") take Enter to go on and ? for the instructions.
 * - User text is only ever put into the page with textContent.
 */
(function () {
  "use strict";

  const root = document.querySelector("[data-work-page]");
  if (!root) {
    return;
  }
  const pageKind = root.dataset.workPage;
  const form = document.getElementById("answer-form");
  const message = document.getElementById("form-message");
  const dialog = document.getElementById("instructions");
  const backUrl = root.dataset.backUrl || "";
  const skipForm = document.getElementById("skip-form");
  let submitting = false;

  /* A stopwatch that can be paused (while the instructions are open). */
  const stopwatch = {
    startedAt: null,
    pausedMs: 0,
    pauseAt: null,
    start() {
      if (this.startedAt === null) {
        this.startedAt = performance.now();
        this.pausedMs = 0;
      }
    },
    pause() {
      if (this.pauseAt === null) {
        this.pauseAt = performance.now();
      }
    },
    resume() {
      if (this.pauseAt !== null) {
        if (this.startedAt !== null) {
          this.pausedMs += performance.now() - Math.max(this.pauseAt, this.startedAt);
        }
        this.pauseAt = null;
      }
    },
    seconds() {
      if (this.startedAt === null) {
        return "";
      }
      const end = this.pauseAt === null ? performance.now() : this.pauseAt;
      return Math.max(0, (end - this.startedAt - this.pausedMs) / 1000).toFixed(3);
    },
  };

  function say(text) {
    if (message) {
      message.textContent = text;
    }
  }

  function isTextField(target) {
    return (
      target instanceof HTMLTextAreaElement ||
      (target instanceof HTMLInputElement && ["text", "number", "search"].includes(target.type))
    );
  }

  /* Enter on a link or another button keeps its own meaning. */
  function isOtherControl(target) {
    if (dialog && dialog.contains(target)) {
      return false; // focus left behind in the closed instructions
    }
    if (target instanceof HTMLAnchorElement) {
      return true;
    }
    return target instanceof HTMLButtonElement && target.form !== form;
  }

  /* ---- instructions dialog ---- */
  function openInstructions() {
    if (!dialog || dialog.open || typeof dialog.showModal !== "function") {
      return;
    }
    stopwatch.pause();
    dialog.showModal();
  }

  /* Closed here, synchronously, rather than left to the browser: its own close event comes a moment
   * later, and keys typed in that moment would go to the dialog's hidden button instead of the task. */
  function closeInstructions() {
    if (dialog.open) {
      dialog.close();
    }
    stopwatch.resume();
    focusTask();
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
    dialog.addEventListener("close", function () {
      stopwatch.resume();
      if (dialog.contains(document.activeElement) || document.activeElement === document.body) {
        focusTask();
      }
    });
    const opener = document.getElementById("open-instructions");
    if (opener) {
      opener.addEventListener("click", function (event) {
        event.preventDefault();
        openInstructions();
      });
    }
  }

  function focusTask() {
    const text = document.getElementById("reply-text");
    if (text) {
      text.focus();
    } else if (document.activeElement instanceof HTMLElement) {
      document.activeElement.blur();
    }
  }

  function goBack() {
    if (backUrl) {
      submitting = true;
      window.location.href = backUrl;
    }
  }

  function skip() {
    if (skipForm) {
      submitting = true;
      skipForm.submit();
    }
  }

  /* Keys shared by the rating and diversity pages; returns true when the key was used. */
  function commonKey(event) {
    if (event.key === "?") {
      event.preventDefault();
      openInstructions();
      return true;
    }
    if (isTextField(event.target)) {
      return false;
    }
    if (event.key === "s" && skipForm) {
      event.preventDefault();
      skip();
      return true;
    }
    if ((event.key === "b" || event.key === "Backspace") && backUrl) {
      event.preventDefault();
      goBack();
      return true;
    }
    return false;
  }

  function onKey(handler) {
    document.addEventListener("keydown", function (event) {
      if ((dialog && dialog.open) || submitting) {
        return; // the dialog has its own keys (Escape closes it); a submitted page takes no more keys
      }
      if (event.ctrlKey || event.metaKey || event.altKey) {
        return;
      }
      handler(event);
    });
  }

  function guardSubmit(check) {
    if (!form) {
      return;
    }
    form.noValidate = true; // our messages instead of the browser's bubbles
    form.addEventListener("submit", function (event) {
      if (submitting || !check()) {
        event.preventDefault();
        return;
      }
      submitting = true;
    });
  }

  /* ---- rating ---- */
  const DIGIT_WAIT_MS = 700; // after "1" on a scale with a 10, wait this long for a "0"

  function setupRating() {
    const questions = Array.from(form.querySelectorAll("fieldset.question"));
    let active = 0;
    let digits = ""; // digits typed for the active question, e.g. "1" then "10"
    let digitTimer = null;

    function isSlider(question) {
      return question.dataset.kind === "slider";
    }

    function answered(question) {
      if (isSlider(question)) {
        const number = question.querySelector('input[type="number"]');
        return number.value !== "" && number.checkValidity();
      }
      return question.querySelector("input:checked") !== null;
    }

    function activate(index) {
      active = Math.max(0, Math.min(questions.length - 1, index));
      digits = "";
      questions.forEach(function (question, i) {
        question.classList.toggle("active", i === active);
        if (i === active) {
          question.setAttribute("aria-current", "true");
        } else {
          question.removeAttribute("aria-current");
        }
      });
    }

    /* A slider and its number box show the same value; the number box is what the form sends (it also
     * works without this script), so an untouched slider sends nothing and the answer is asked for. */
    questions.filter(isSlider).forEach(function (question) {
      const range = question.querySelector("input.slider-range");
      const number = question.querySelector('input[type="number"]');
      range.addEventListener("input", function () {
        number.value = range.value;
        question.classList.remove("has-error");
      });
      number.addEventListener("input", function () {
        if (number.value !== "") {
          range.value = number.value;
        }
      });
    });

    function setSlider(question, value) {
      const range = question.querySelector("input.slider-range");
      const number = question.querySelector('input[type="number"]');
      const low = Number(range.min);
      const high = Number(range.max);
      const clamped = Math.max(low, Math.min(high, value));
      range.value = String(clamped);
      number.value = String(clamped);
      question.classList.remove("has-error");
      say("");
    }

    questions.forEach(function (question, index) {
      question.addEventListener("click", function () {
        activate(index);
      });
      question.addEventListener("focusin", function () {
        activate(index);
      });
      question.addEventListener("change", function () {
        question.classList.remove("has-error");
        say("");
      });
    });
    const firstOpen = questions.findIndex(function (question) {
      return !answered(question);
    });
    activate(firstOpen === -1 ? 0 : firstOpen);

    function complete() {
      const missing = questions.findIndex(function (question) {
        return !answered(question);
      });
      if (missing !== -1) {
        const question = questions[missing];
        const keys = question.dataset.keys ? " (keys " + question.dataset.keys + ")" : "";
        say("Choose a score for “" + question.dataset.name + "” first" + keys + ".");
        question.classList.add("has-error");
        activate(missing);
        return false;
      }
      form.elements.seconds.value = stopwatch.seconds();
      return true;
    }
    guardSubmit(complete);

    function pick(question, key) {
      const radio = question.querySelector('input[data-key="' + key + '"]');
      if (radio === null) {
        return false;
      }
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
      return true;
    }

    function longerKeyExists(question, prefix) {
      return Array.from(question.querySelectorAll("input[data-key]")).some(function (radio) {
        return radio.dataset.key.length > prefix.length && radio.dataset.key.startsWith(prefix);
      });
    }

    function advance() {
      clearTimeout(digitTimer);
      digitTimer = null;
      if (active < questions.length - 1) {
        activate(active + 1);
      } else {
        digits = "";
      }
    }

    function ordinalDigit(question, key) {
      clearTimeout(digitTimer);
      const candidate = digits + key;
      if (digits !== "" && pick(question, candidate)) {
        digits = candidate;
      } else if (pick(question, key)) {
        digits = key;
      } else {
        digits = "";
        say("“" + key + "” is not a key of “" + question.dataset.name + "”.");
        return;
      }
      if (longerKeyExists(question, digits)) {
        digitTimer = setTimeout(advance, DIGIT_WAIT_MS); // "1" could still become "10"
      } else {
        advance();
      }
    }

    function sliderKey(question, event) {
      const range = question.querySelector("input.slider-range");
      const current = range.dataset.untouched && question.querySelector('input[type="number"]').value === ""
        ? Math.round((Number(range.min) + Number(range.max)) / 2)
        : Number(range.value);
      const steps = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10 };
      if (event.key in steps && !(event.key === "ArrowUp" || event.key === "ArrowDown")) {
        event.preventDefault();
        setSlider(question, current + steps[event.key]);
        return true;
      }
      if (event.key === "Home" || event.key === "End") {
        event.preventDefault();
        setSlider(question, Number(event.key === "Home" ? range.min : range.max));
        return true;
      }
      if (/^[0-9]$/.test(event.key)) {
        event.preventDefault();
        clearTimeout(digitTimer);
        digits = (digits + event.key).slice(-String(range.max).length);
        setSlider(question, Number(digits));
        digitTimer = setTimeout(function () {
          digits = "";
        }, DIGIT_WAIT_MS * 2);
        return true;
      }
      return false;
    }

    onKey(function (event) {
      const question = questions[active];
      const inNumberBox = event.target instanceof HTMLInputElement && event.target.type === "number";
      if (event.key === "Enter" && !isOtherControl(event.target)) {
        event.preventDefault();
        form.requestSubmit();
        return;
      }
      if (inNumberBox) {
        return; // typing in the number box is the box's own business
      }
      if (commonKey(event)) {
        return;
      }
      if (isSlider(question) && sliderKey(question, event)) {
        return;
      }
      if (/^[0-9]$/.test(event.key)) {
        event.preventDefault();
        ordinalDigit(question, event.key);
      } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        activate(active + (event.key === "ArrowDown" ? 1 : -1));
      }
    });
  }

  /* ---- reference writing ---- */

  /* Mirrors annotation/reference_rules.normalise: case (upper-then-lower approximates casefold),
   * compatibility forms, punctuation and spacing do not make a reply different. */
  function normalise(text) {
    return text
      .normalize("NFKC")
      .toUpperCase()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ")
      .trim();
  }

  function setupWriting() {
    const text = document.getElementById("reply-text");
    const note = document.getElementById("paste-note");
    const earlierNode = document.getElementById("written-replies");
    const earlier = earlierNode ? JSON.parse(earlierNode.textContent) : [];
    let typed = text.value.length; // characters that arrived through key presses (or came back from the server)
    let pasted = false;

    /* A blocked paste changes nothing, so it does not flag the reply; text that gets in anyway does. */
    function blockPaste(event) {
      event.preventDefault();
      if (note) {
        note.hidden = false;
      }
    }
    text.addEventListener("paste", blockPaste);
    text.addEventListener("drop", blockPaste);
    text.addEventListener("beforeinput", function (event) {
      if (event.inputType === "insertFromPaste" || event.inputType === "insertFromDrop") {
        blockPaste(event);
      }
    });
    text.addEventListener("keydown", function (event) {
      stopwatch.start();
      if (event.key.length === 1 && !event.ctrlKey && !event.metaKey) {
        typed += 1;
      } else if (event.key === "Enter" && event.shiftKey) {
        typed += 1;
      }
    });
    text.addEventListener("compositionend", function (event) {
      typed += (event.data || "").length;
    });
    text.addEventListener("input", function (event) {
      if (event.inputType && event.inputType.startsWith("insertFrom")) {
        pasted = true;
      }
      say("");
    });

    function check() {
      const value = text.value.trim();
      if (value.length < 2) {
        say("A reply needs at least 2 characters.");
        return false;
      }
      const key = normalise(value);
      const repeated = earlier.find(function (previous) {
        return normalise(previous) === key;
      });
      if (repeated !== undefined) {
        say("You already wrote this reply (“" + repeated + "”); write a different one.");
        return false;
      }
      // Text that did not arrive through key presses (pasted past the block, dropped, filled in).
      form.elements.pasted.value = pasted || value.length > typed ? "1" : "";
      form.elements.keystrokes.value = String(typed);
      form.elements.seconds.value = stopwatch.seconds();
      return true;
    }
    guardSubmit(check);

    onKey(function (event) {
      if (event.target === text) {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          form.requestSubmit();
        }
        return;
      }
      if (event.key === "?") {
        event.preventDefault();
        openInstructions();
      }
    });
  }

  /* ---- diversity ---- */
  function setupDiversity() {
    const boxes = Array.from(form.querySelectorAll('input[name="appropriate"]'));
    const meanings = document.getElementById("meanings");

    function marked() {
      return boxes.filter(function (box) {
        return box.checked;
      }).length;
    }

    /* With none marked the answer can only be 0, with one only 1: fill it in. With more, the annotator
     * must choose, so a number filled in here (not typed) is cleared again. */
    let filledIn = false;
    function fitMeanings() {
      const count = marked();
      meanings.min = count ? "1" : "0";
      meanings.max = String(count);
      if (count <= 1) {
        meanings.value = String(count);
        filledIn = true;
      } else if (filledIn || (meanings.value !== "" && Number(meanings.value) > count)) {
        meanings.value = "";
        filledIn = false;
      }
    }
    meanings.addEventListener("input", function () {
      filledIn = false;
      say("");
    });
    boxes.forEach(function (box) {
      box.addEventListener("change", function () {
        say("");
        fitMeanings();
      });
    });
    if (meanings.value === "") {
      fitMeanings();
    }

    function check() {
      const count = marked();
      const value = meanings.value.trim();
      const lowest = count ? 1 : 0;
      if (!/^[0-9]+$/.test(value) || Number(value) < lowest || Number(value) > count) {
        say(
          count
            ? "With " + count + " appropriate replies, the number of meanings is " + lowest + " to " + count + "."
            : "No reply is marked appropriate, so the number of meanings is 0."
        );
        meanings.focus();
        return false;
      }
      form.elements.seconds.value = stopwatch.seconds();
      return true;
    }
    guardSubmit(check);

    onKey(function (event) {
      if (commonKey(event)) {
        return;
      }
      if (event.key === "Enter" && !isOtherControl(event.target)) {
        event.preventDefault();
        form.requestSubmit();
        return;
      }
      if (event.target === meanings) {
        return;
      }
      if (event.key === "m") {
        event.preventDefault();
        meanings.focus();
        meanings.select();
      } else if (/^[1-9]$/.test(event.key)) {
        const box = form.querySelector('input[name="appropriate"][data-key="' + event.key + '"]');
        event.preventDefault();
        if (box) {
          box.checked = !box.checked;
          box.dispatchEvent(new Event("change", { bubbles: true }));
        }
      }
    });
  }

  /* ---- start ---- */
  if (pageKind === "rate" && form) {
    setupRating();
  } else if (pageKind === "write" && form) {
    setupWriting();
  } else if (pageKind === "diversity" && form) {
    setupDiversity();
  } else if (pageKind === "training-feedback") {
    // The qualification round's feedback and result pages: Enter goes on (the next practice item, the
    // first task), as the rating page's Enter does; ? shows the instructions again.
    onKey(function (event) {
      if (commonKey(event)) {
        return;
      }
      const onward = root.querySelector("a[data-enter-link], a[autofocus]");
      if (event.key === "Enter" && onward && !isOtherControl(event.target)) {
        event.preventDefault();
        submitting = true;
        window.location.href = onward.href;
      }
    });
  } else if (pageKind === "none") {
    onKey(function (event) {
      if ((event.key === "b" || event.key === "Backspace") && backUrl && !isTextField(event.target)) {
        event.preventDefault();
        goBack();
      }
    });
  }
  if (pageKind !== "write") {
    stopwatch.start(); // reading counts: from the page being shown to the answer
  }
  if (dialog && dialog.dataset.autoshow) {
    openInstructions();
  } else {
    // Focus now, while the page loads: the autofocus attribute is applied a moment after the load event,
    // and the first keys of someone who starts typing at once would be lost.
    focusTask();
  }
})();
