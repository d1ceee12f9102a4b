// hookloop inbox: live timeline over server-sent events. The server renders (and escapes) every row.
(function () {
  "use strict";
  function start() {
    var list = document.getElementById("timeline");
    if (!list || list.dataset.live !== "yes" || !window.EventSource) return;
    var url = "/runs/" + encodeURIComponent(list.dataset.run) + "/events?after=" + encodeURIComponent(list.dataset.after);
    var source = new EventSource(url);
    source.addEventListener("rows", function (event) {
      var template = document.createElement("template");
      template.innerHTML = event.data;
      list.appendChild(template.content);
    });
    source.addEventListener("end", function (event) {
      source.close();
      var status = document.getElementById("status");
      if (status) { status.textContent = event.data; status.className = "badge " + event.data; }
      window.location.replace(window.location.pathname);  // the final state: answer, a new pause's form
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
