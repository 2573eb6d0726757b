"""The planned test order (tests/schedule.py): the slow work dealt evenly over worksteal's first chunks."""

from tests.schedule import Unit, chunk_sizes, durations_to_record, planned_order


def test_chunk_sizes_are_what_worksteal_sends_first():
    assert chunk_sizes(1452, 2) == [726, 726]
    assert chunk_sizes(5, 3) == [1, 2, 2]
    assert chunk_sizes(7, 1) == [7]


def test_the_longest_go_first_to_the_chunk_with_the_least_work():
    units = [Unit(name, seconds, [name]) for name, seconds in [("a", 3), ("b", 10), ("c", 5), ("d", 7)]]
    quick = [Unit(f"q{i}", 0.05, [f"q{i}"]) for i in range(4)]
    order = planned_order(units + quick, workers=2)
    first, second = order[:4], order[4:]
    assert first[:2] == ["b", "a"] and second[:2] == ["d", "c"]  # 13 s and 12 s of slow work
    assert all(name.startswith("q") for name in first[2:] + second[2:])  # what a steal takes


def test_a_files_slow_tests_stay_together_unless_no_chunk_has_room():
    together = Unit("file", 20, ["f1", "f2", "f3"])
    quick = [Unit(f"q{i}", 0.05, [f"q{i}"]) for i in range(5)]
    order = planned_order([together, *quick], workers=2)
    assert order[:3] == ["f1", "f2", "f3"] and len(order) == 8
    too_big = Unit("file", 30, ["f1", "f2", "f3", "f4", "f5", "f6"])
    order = planned_order([too_big, Unit("q", 0.05, ["q"])], workers=2)
    assert order == ["f1", "f3", "f5", "f2", "f4", "f6", "q"]  # dealt test by test, 5 s each


def test_one_worker_runs_the_longest_first():
    units = [Unit(n, s, [n]) for n, s in [("a", 1), ("b", 9), ("c", 4)]]
    assert planned_order(units, workers=1) == ["b", "c", "a"]


def test_recorded_durations_keep_the_tests_of_a_second_or_more():
    assert durations_to_record({"t::b": 1.26, "t::a": 0.99, "t::c": 12.0}) == {"t::b": 1.3, "t::c": 12.0}
