// the index's languages table: sorted by a clicked header (sort_table.js)
sortableTable(document.querySelector("table.sortable"));
