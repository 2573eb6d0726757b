(function () {
  var table = document.getElementById("labels"), body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var controls = {flag: document.getElementById("filter-flag"), source: document.getElementById("filter-source"),
                  review: document.getElementById("filter-review")};
  var shown = document.getElementById("shown"), sortKey = "", sortDown = false;
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
    if (sortKey) parts.push("sort=" + (sortDown ? "-" : "") + sortKey);
    return parts.join("&");
  }
  function apply() {
    var n = 0;
    rows.forEach(function (row) { var ok = matches(row); row.hidden = !ok; if (ok) n++; });
    shown.textContent = n + " of " + rows.length + " classes shown";
    try { history.replaceState(null, "", "#" + state()); } catch (e) {}
  }
  function value(row, column) {
    var cell = row.cells[column], key = cell.getAttribute("data-sort");
    return key !== null ? key : cell.textContent;
  }
  function sortBy(key, down) {
    var header = table.querySelector('th[data-key="' + key + '"]');
    if (!header) return;
    var column = header.cellIndex, numeric = header.hasAttribute("data-numeric");
    sortKey = key; sortDown = down;
    rows.sort(function (a, b) {
      var x = value(a, column), y = value(b, column);
      var order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return (down ? -order : order) || (a.getAttribute("data-order") - b.getAttribute("data-order"));
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.setAttribute("aria-sort", th === header ? (down ? "descending" : "ascending") : "none");
    });
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    th.addEventListener("click", function () {
      var key = th.getAttribute("data-key");
      sortBy(key, key === sortKey ? !sortDown : false);
      apply();
    });
  });
  for (var name in controls) controls[name].addEventListener("change", apply);
  location.hash.replace(/^#/, "").split("&").forEach(function (part) {
    var pair = part.split("="), key = pair[0], val = decodeURIComponent(pair[1] || "");
    if (key === "sort") sortBy(val.replace(/^-/, ""), val.charAt(0) === "-");
    else if (controls[key]) controls[key].value = val;
  });
  apply();
})();
