// RLVR Lab: glue between the widget JavaScript served from this site and the rest of the page.
// Loaded after require.min.js and before embed-amd.js (see nb_ipywidgets_js in _config.yml).
(function () {
  // 1. Point requirejs at book/_static/widgets-js/, so embed-amd.js finds its fonts here (no CDN).
  var here = document.currentScript && document.currentScript.src;
  if (window.requirejs && here) {
    window.requirejs.config({ baseUrl: new URL("widgets-js/", here).href });
  }
  // 2. The widget manager typesets labels through the MathJax 2 API (MathJax.Hub.Queue); the book loads
  //    MathJax 3, which has no Hub. Give whatever window.MathJax becomes (the config object first, then
  //    MathJax 3 itself) a Hub whose Queue asks MathJax 3 to typeset the page.
  function withHub(mj) {
    if (mj && typeof mj === "object" && !mj.Hub) {
      mj.Hub = {
        // Queue(["Typeset", MathJax.Hub, element]): typeset that widget element only. A page-wide
        // typesetPromise() would re-read the hidden MathML copies MathJax keeps for screen readers and nest
        // a new rendering inside each one, on every call.
        Queue: function () {
          var live = window.MathJax, elements = [];
          Array.prototype.forEach.call(arguments, function (job) {
            if (Array.isArray(job) && job[2] && job[2].nodeType === 1) elements.push(job[2]);
          });
          if (elements.length && live && typeof live.typesetPromise === "function") {
            live.typesetPromise(elements).catch(function () {});
          }
        }
      };
    }
    return mj;
  }
  var current = withHub(window.MathJax);
  try {
    Object.defineProperty(window, "MathJax", {
      configurable: true,
      get: function () { return current; },
      set: function (value) { current = withHub(value); }
    });
  } catch (e) {
    /* a page that froze window.MathJax keeps it as it is */
  }
})();
