(function () {
  var table = document.getElementById("labels");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var controls = {flag: document.getElementById("filter-flag"), source: document.getElementById("filter-source"),
                  review: document.getElementById("filter-review")};
  var shown = document.getElementById("shown");
  function matches(row) {
    var flags = " " + row.getAttribute("data-flags") + " ", f = controls.flag.value;
    if (f === "any" && flags === "  ") return false;
    if (f === "none" && flags !== "  ") return false;
    if (f && f !== "any" && f !== "none" && flags.indexOf(" " + f + " ") < 0) return false;
    if (controls.source.value && row.getAttribute("data-source") !== controls.source.value) return false;
    var reviewed = row.getAttribute("data-reviewed") !== "";
    if (controls.review.value === "reviewed" && !reviewed) return false;
    if (controls.review.value === "unreviewed" && reviewed) return false;
    return true;
  }
  function state() {
    var parts = [];
    for (var name in controls) if (controls[name].value) parts.push(name + "=" + encodeURIComponent(controls[name].value));
    if (sorter.state.key) parts.push("sort=" + (sorter.state.down ? "-" : "") + sorter.state.key);
    return parts.join("&");
  }
  function apply() {
    var n = 0;
    rows.forEach(function (row) { var ok = matches(row); row.hidden = !ok; if (ok) n++; });
    shown.textContent = n + " of " + rows.length + " classes shown";
    try { history.replaceState(null, "", "#" + state()); } catch (e) {}
  }
  var sorter = sortableTable(table, apply);  // sort_table.js: a click sorts, then the URL says so
  for (var name in controls) controls[name].addEventListener("change", apply);
  location.hash.replace(/^#/, "").split("&").forEach(function (part) {
    var pair = part.split("="), key = pair[0], val = decodeURIComponent(pair[1] || "");
    if (key === "sort") sorter.sortBy(val.replace(/^-/, ""), val.charAt(0) === "-");
    else if (controls[key]) controls[key].value = val;
  });
  apply();
})();
