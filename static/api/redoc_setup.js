// Loaded before ReDoc's bundle (templates/api_redoc.html), with the answer's Content-Security-Policy nonce in
// its data-nonce attribute.
(function () {
  "use strict";
  // The bundle adds <style> elements as it loads, before Redoc.init could hand it the nonce (its later ones
  // get it from init: static/api/redoc_init.js): a <style> element a script adds to this page gets the nonce.
  // Markup never passes through here, so a <style> written into the page's HTML stays refused.
  var nonce = document.currentScript.dataset.nonce;
  var withNonce = function (node) {
    if (node instanceof HTMLStyleElement && !node.nonce) { node.nonce = nonce; }
    return node;
  };
  var appendChild = Node.prototype.appendChild;
  var insertBefore = Node.prototype.insertBefore;
  Node.prototype.appendChild = function (node) { return appendChild.call(this, withNonce(node)); };
  Node.prototype.insertBefore = function (node, child) { return insertBefore.call(this, withNonce(node), child); };

  // ReDoc's bundle shows Redocly's logo from cdn.redoc.ly whatever its options: the image gets no address, so
  // the page fetches nothing from elsewhere (the app also runs offline, and the policy would refuse it).
  var elsewhere = function (value) { return String(value).indexOf("https://cdn.redoc.ly/") === 0; };
  var setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (this.tagName === "IMG" && name === "src" && elsewhere(value)) { return; }
    return setAttribute.call(this, name, value);
  };
  var src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    get: src.get,
    set: function (value) { if (!elsewhere(value)) { src.set.call(this, value); } },
    configurable: true,
  });
})();
