// A table sorted by a click on a header (again: the other way round), shared by the index and the
// language pages. A cell's data-sort, when it has one, is what sorts (a figure, not its text); ties
// keep the rows' first order. `onSort` runs after a click (a page that keeps its state in the URL).
function sortableTable(table, onSort) {
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows), state = {key: "", down: false};
  rows.forEach(function (row, index) { if (!row.hasAttribute("data-order")) row.setAttribute("data-order", index); });
  function value(row, column) {
    var cell = row.cells[column], key = cell.getAttribute("data-sort");
    return key !== null ? key : cell.textContent;
  }
  function sortBy(key, down) {
    var header = table.querySelector('th[data-key="' + key + '"]');
    if (!header) return;
    var column = header.cellIndex, numeric = header.hasAttribute("data-numeric");
    state.key = key; state.down = down;
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
      sortBy(key, key === state.key ? !state.down : false);
      if (onSort) onSort();
    });
  });
  return {sortBy: sortBy, state: state, rows: rows};
}
