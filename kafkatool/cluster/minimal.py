"""`--strategy minimal`: balance replicas and preferred leaders while moving as little data as possible.

Kafka's `--generate` reassigns every partition from scratch, so adding one broker to a cluster moves
most replicas.  This planner starts from the current assignment instead:

1. replicas on brokers outside `--broker-list` must move, and so must replicas that share a rack
   with another replica of their partition while a rack without one is available;
2. then, while some broker holds two or more replicas more than another, one replica moves from the
   fullest broker to the emptiest one that may take it (never a second replica of a partition on a
   broker; never fewer racks per partition than before) — the smallest partition first, so bytes
   are minimal too.  Each move lowers the imbalance by one, so the count of moves is the least
   that reaches replica counts within ±1 (see `lower_bound_moves`);
3. preferred leaders (first replicas) are balanced within ±1 by reordering replica lists only, which
   moves no data: swaps where the leader leads two more partitions than another replica of the
   same partition, then augmenting paths for what swaps alone cannot fix.

Replicas keep their list position when they move, so a moved leader's replacement leads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from kafkatool.cluster.assignment import AssignmentError, BrokerMetadata
from kafkatool.cluster.model import Assignment, TopicPartition


def plan_minimal(
    current: Assignment,
    brokers: Sequence[BrokerMetadata],
    sizes: dict[TopicPartition, int] | None = None,
) -> Assignment:
    """A new assignment for `current` over `brokers` (all partitions, changed or not)."""
    return _Planner(current, brokers, sizes or {}).run()


def lower_bound_moves(current: Assignment, broker_ids: Sequence[int]) -> int:
    """No plan reaching counts within ±1 on `broker_ids` moves fewer replicas than this.

    Replicas on other brokers must move; brokers above the upper target must each send their
    excess (distinct replicas), and brokers below the lower target must each receive.
    """
    target = set(broker_ids)
    counts = dict.fromkeys(target, 0)
    drained = 0
    total = 0
    for replicas in current.values():
        for b in replicas:
            total += 1
            if b in target:
                counts[b] += 1
            else:
                drained += 1
    if not target:
        return drained
    lo, rem = divmod(total, len(target))
    hi = lo + (1 if rem else 0)
    over = sum(max(0, c - hi) for c in counts.values())
    under = sum(max(0, lo - c) for c in counts.values())
    return max(drained + over, under)


class _Planner:
    def __init__(self, current: Assignment, brokers: Sequence[BrokerMetadata], sizes: dict[TopicPartition, int]):
        self.tps = sorted(current)
        self.replicas = [list(current[tp]) for tp in self.tps]
        self.size = [sizes.get(tp, 0) for tp in self.tps]
        self.brokers = sorted(b.id for b in brokers)
        if not self.brokers:
            raise AssignmentError("no brokers to assign to")
        racks = {b.id: b.rack for b in brokers}
        self.rack: dict[int, str | None] = racks if all(r is not None for r in racks.values()) else {}
        self.num_racks = len(set(self.rack.values())) if self.rack else 0
        self.target = set(self.brokers)
        self.count = dict.fromkeys(self.brokers, 0)
        self.hosted: dict[int, set[int]] = {b: set() for b in self.brokers}
        for i, reps in enumerate(self.replicas):
            if len(set(reps)) > len(self.brokers):
                raise AssignmentError(
                    f"Replication factor: {len(set(reps))} larger than available brokers: {len(self.brokers)}."
                )
            for b in reps:
                if b in self.target:
                    self.count[b] += 1
                    self.hosted[b].add(i)

    # -- racks -------------------------------------------------------------------------------

    def _racks(self, brokers: Sequence[int]) -> set[str | None]:
        return {self.rack.get(b) for b in brokers if b in self.target}

    def _wanted_spread(self, i: int) -> int:
        return min(len(self.replicas[i]), self.num_racks) if self.rack else 0

    def _may_take(self, i: int, slot: int, dst: int) -> bool:
        """May replica `slot` of partition i move to `dst`: not a second copy there, no rack lost?"""
        reps = self.replicas[i]
        if dst in reps:
            return False
        if not self.rack:
            return True
        others = [b for k, b in enumerate(reps) if k != slot]
        return len(self._racks(others) | {self.rack[dst]}) >= len(self._racks(reps))

    # -- moves -------------------------------------------------------------------------------

    def _move(self, i: int, slot: int, dst: int) -> None:
        src = self.replicas[i][slot]
        if src in self.target:
            self.count[src] -= 1
            self.hosted[src].discard(i)
        self.replicas[i][slot] = dst
        self.count[dst] += 1
        self.hosted[dst].add(i)

    def _relocate(self, i: int, slot: int) -> None:
        """A mandatory move: to the emptiest broker that adds a missing rack, else any legal one."""
        reps = self.replicas[i]
        others = [b for k, b in enumerate(reps) if k != slot]
        taken = set(others)
        need_rack = bool(self.rack) and len(self._racks(others)) < self._wanted_spread(i)
        used_racks = self._racks(others)
        best = None
        fallback = None
        for b in self.brokers:
            if b in taken:
                continue
            key = (self.count[b], b)
            if need_rack and self.rack[b] in used_racks:
                if fallback is None or key < fallback[0]:
                    fallback = (key, b)
                continue
            if best is None or key < best[0]:
                best = (key, b)
        choice = best or fallback
        if choice is None:
            raise AssignmentError(
                f"Replication factor: {len(reps)} larger than available brokers: {len(self.brokers)}."
            )
        self._move(i, slot, choice[1])

    def _mandatory(self) -> None:
        todo: list[tuple[int, int]] = []
        for i, reps in enumerate(self.replicas):
            for slot, b in enumerate(reps):
                if b not in self.target:
                    todo.append((i, slot))
        todo.sort(key=lambda t: (-self.size[t[0]], t))
        for i, slot in todo:
            self._relocate(i, slot)
        if not self.rack:
            return
        for i, reps in enumerate(self.replicas):
            want = self._wanted_spread(i)
            while len(self._racks(reps)) < want:
                # A rack holds two replicas: move the one on the fullest broker (never the leader if avoidable).
                seen: dict[str | None, int] = {}
                dup_slots = []
                for slot, b in enumerate(reps):
                    r = self.rack[b]
                    if r in seen:
                        dup_slots.append(slot)
                    else:
                        seen[r] = slot
                slot = max(dup_slots, key=lambda s: (self.count[reps[s]], s))
                self._relocate(i, slot)

    def _balance(self) -> None:
        total = sum(self.count.values())
        lo = total // len(self.brokers)
        stuck: set[int] = set()
        needy_only = True
        while True:
            live = [b for b in self.brokers if b not in stuck]
            if not live:
                if not needy_only:
                    return
                needy_only, stuck = False, set()  # no move fills a needy broker: allow the others
                continue
            src = max(live, key=lambda b: (self.count[b], -b))
            limit = self.count[src] - 2
            if needy_only:
                limit = min(limit, lo - 1)  # only brokers that must receive anyway: no wasted moves
            dsts = sorted((b for b in self.brokers if self.count[b] <= limit), key=lambda b: (self.count[b], b))
            if not dsts:
                if needy_only and any(self.count[b] < lo for b in self.brokers):
                    stuck.add(src)
                    continue
                if needy_only:
                    needy_only, stuck = False, set()
                    continue
                return
            if self._move_one(src, dsts):
                stuck.clear()
            else:
                stuck.add(src)

    def _move_one(self, src: int, dsts: list[int]) -> bool:
        """Move src's smallest movable replica to the emptiest destination that may take it."""
        for i in sorted(self.hosted[src], key=lambda i: (self.size[i], i)):
            slot = self.replicas[i].index(src)
            for dst in dsts:
                if self._may_take(i, slot, dst):
                    self._move(i, slot, dst)
                    return True
        return False

    # -- leaders -----------------------------------------------------------------------------

    def _balance_leaders(self) -> None:
        lead = dict.fromkeys(self.brokers, 0)
        for reps in self.replicas:
            if reps and reps[0] in lead:
                lead[reps[0]] += 1
        changed = True
        while changed:
            changed = False
            for reps in self.replicas:
                a = reps[0]
                best = min(range(1, len(reps)), key=lambda k: (lead[reps[k]], k), default=None)
                if best is not None and lead[a] > lead[reps[best]] + 1:
                    c = reps[best]
                    reps[0], reps[best] = c, a
                    lead[a] -= 1
                    lead[c] += 1
                    changed = True
        self._leader_paths(lead)

    def _leader_paths(self, lead: dict[int, int]) -> None:
        """Shift leadership along chains a→…→z when a leads 2+ more than z and no single swap helps."""
        led_by: dict[int, set[int]] = {b: set() for b in self.brokers}
        for i, reps in enumerate(self.replicas):
            led_by[reps[0]].add(i)
        for _ in range(len(self.replicas) + 1):
            hi_b = max(self.brokers, key=lambda b: (lead[b], -b))
            lo_b = min(self.brokers, key=lambda b: (lead[b], b))
            if lead[hi_b] - lead[lo_b] <= 1:
                return
            path = self._find_path(hi_b, lead, led_by)
            if path is None:
                return
            for i, new_leader in path:
                reps = self.replicas[i]
                old = reps[0]
                k = reps.index(new_leader)
                reps[0], reps[k] = new_leader, old
                led_by[old].discard(i)
                led_by[new_leader].add(i)
            lead[hi_b] -= 1
            lead[path[-1][1]] += 1

    def _find_path(
        self, start: int, lead: dict[int, int], led_by: dict[int, set[int]]
    ) -> list[tuple[int, int]] | None:
        """BFS from `start` over "b leads partition i hosted by c" to a broker leading ≤ lead[start]-2."""
        goal = lead[start] - 2
        prev: dict[int, tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            b = queue.popleft()
            for i in led_by[b]:
                for c in self.replicas[i][1:]:
                    if c in prev or c not in self.target:
                        continue
                    prev[c] = (b, i)
                    if lead[c] <= goal:
                        path: list[tuple[int, int]] = []
                        node = c
                        while prev[node] is not None:
                            pb, pi = prev[node]  # type: ignore[misc]
                            path.append((pi, node))
                            node = pb
                        path.reverse()
                        return path
                    queue.append(c)
        return None

    def run(self) -> Assignment:
        self._mandatory()
        self._balance()
        self._balance_leaders()
        return {tp: reps for tp, reps in zip(self.tps, self.replicas, strict=True)}
