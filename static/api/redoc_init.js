// Starts ReDoc on #redoc-container (templates/api_redoc.html) with the schema's address and the answer's
// Content-Security-Policy nonce, from the container's data attributes: ReDoc's styled-components write
// <style> elements at run time, which the policy lets through with that nonce only.
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  Redoc.init(container.dataset.specUrl, { nonce: container.dataset.nonce }, container);
})();
