/*
 * The comment / flag box under an annotator's item (templates/annotation/work/_note_form.html).
 *
 * - "f" opens the box with the reason list focused (the other keys of the item pages, digits, Enter,
 *   s, b, Backspace, ?, belong to static/annotation/work.js and are left alone); Esc closes it again.
 * - Which button sends the form says what the note is: "Flag the item" (a reason is needed) or "Send as
 *   a comment only" (text is needed).
 * - Keys typed inside the box never reach the item's own keyboard handling, so digits and Enter in the
 *   comment do not pick a score or submit the answer.
 * - The form is sent in the background and the page says it was recorded, so the answer being given
 *   stays as it is; without this script the form posts and the page comes back with a message.
 * - Text only ever goes into the page with textContent.
 */
(function () {
  "use strict";

  const box = document.getElementById("item-notes");
  const form = document.getElementById("note-form");
  if (!box || !form) {
    return;
  }
  const reason = document.getElementById("note-reason");
  const text = document.getElementById("note-text");
  const status = document.getElementById("note-status");
  const instructions = document.getElementById("instructions");
  let sending = false;

  function say(message, kind) {
    status.textContent = message;
    status.className = "note-status" + (kind ? " " + kind : "");
  }

  function isField(target) {
    return (
      target instanceof HTMLTextAreaElement ||
      target instanceof HTMLSelectElement ||
      (target instanceof HTMLInputElement && ["text", "number", "search"].includes(target.type))
    );
  }

  function openFlag() {
    box.open = true;
    say("");
    reason.focus();
  }

  function close() {
    box.open = false;
    if (document.activeElement instanceof HTMLElement && box.contains(document.activeElement)) {
      document.activeElement.blur();
    }
  }

  box.addEventListener("toggle", function () {
    if (!box.open && document.activeElement instanceof HTMLElement && box.contains(document.activeElement)) {
      document.activeElement.blur(); // a closed box gives the keys back to the item
    }
  });

  [reason, text].forEach(function (field) {
    field.addEventListener("input", function () {
      say("");
    });
  });

  // Inside the box: Esc closes it, everything else stays here (not the item's keys).
  box.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    }
    event.stopPropagation();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== "f" || event.ctrlKey || event.metaKey || event.altKey || sending) {
      return;
    }
    if (isField(event.target) || (instructions && instructions.open)) {
      return;
    }
    event.preventDefault();
    openFlag();
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (sending) {
      return;
    }
    const kind = event.submitter && event.submitter.value === "comment" ? "comment" : "flag";
    if (kind === "flag" && !reason.value) {
      say("Choose why you flag this item.", "error");
      reason.focus();
      return;
    }
    if (kind === "comment" && !text.value.trim()) {
      say("Write a comment first.", "error");
      text.focus();
      return;
    }
    sending = true;
    say("Sending…");
    const data = new FormData(form);
    data.set("kind", kind);
    if (kind !== "flag") {
      data.delete("reason"); // the list is for flags; a comment keeps its text only
    }
    fetch(form.action, {
      method: "POST",
      body: data,
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.json().then(
          function (body) {
            return { ok: response.ok, body: body };
          },
          function () {
            return { ok: false, body: { detail: "the server did not answer (" + response.status + ")" } };
          }
        );
      })
      .then(function (result) {
        if (result.ok) {
          form.reset();
          say(result.body.detail || "Recorded.", "ok");
          if (document.activeElement instanceof HTMLElement && box.contains(document.activeElement)) {
            document.activeElement.blur(); // back to the item's keys
          }
        } else {
          const field = result.body.field ? result.body.field + ": " : "";
          say("Not sent: " + field + (result.body.detail || "try again"), "error");
        }
      })
      .catch(function () {
        say("Not sent: the connection failed; try again.", "error");
      })
      .finally(function () {
        sending = false;
      });
  });
})();
