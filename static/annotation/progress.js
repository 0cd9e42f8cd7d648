// The researcher's annotation page: copy the invite link (no user text is written into the page).
(function () {
  "use strict";
  const button = document.getElementById("invite-copy");
  const input = document.getElementById("invite-url");
  const note = document.getElementById("invite-copied");
  if (!button || !input) return;
  button.addEventListener("click", async function () {
    input.select();
    try {
      await navigator.clipboard.writeText(input.value);
      note.textContent = "Copied.";
    } catch (error) {
      // Clipboard API refused (an http page, an old browser): the text is selected; Ctrl+C copies it.
      note.textContent = "Press Ctrl+C to copy.";
    }
  });
})();
