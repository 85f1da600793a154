/* One "Show the code" switch per page: code cells start hidden, the reader opens them all at once.
   Loaded in the page head (jupyter-book adds every book/_static/*.js), so the class below is set
   before the body is drawn and no code flashes; without JavaScript every cell shows as built. */
(function () {
  "use strict";
  var HIDDEN = "iscsi-code-hidden";
  var KEY = "iscsi-show-code";
  var root = document.documentElement;
  var remembered = false;
  try { remembered = window.sessionStorage.getItem(KEY) === "1"; } catch (e) { remembered = false; }
  if (!remembered) { root.classList.add(HIDDEN); }

  function label() { return root.classList.contains(HIDDEN) ? "Show the code" : "Hide the code"; }

  function addSwitch() {
    var article = document.querySelector("article.bd-article") || document.querySelector("main");
    if (!article || !article.querySelector("div.cell div.cell_input")) { return; }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "iscsi-code-toggle";
    button.setAttribute("aria-pressed", String(!root.classList.contains(HIDDEN)));
    button.textContent = label();
    button.addEventListener("click", function () {
      var hidden = root.classList.toggle(HIDDEN);
      button.textContent = label();
      button.setAttribute("aria-pressed", String(!hidden));
      try { window.sessionStorage.setItem(KEY, hidden ? "0" : "1"); } catch (e) { /* private mode */ }
    });
    var heading = article.querySelector("h1");
    if (heading && heading.parentNode) {
      heading.parentNode.insertBefore(button, heading.nextSibling);
    } else {
      article.insertBefore(button, article.firstChild);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", addSwitch);
  } else {
    addSwitch();
  }
})();
