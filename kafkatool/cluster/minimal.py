"""`--strategy minimal`: balance replicas and preferred leaders while moving as little data as possible.

Kafka's `--generate` reassigns every partition from scratch, so adding one broker to a cluster moves
most replicas.  This planner starts from the current assignment instead and meets its goals in this
order (an earlier goal is never given up for a later one; `Goals` turns the optional ones off):

1. racks: a partition never loses a rack it spans, and gains one where a rack without a replica is
   available;
2. required moves: replicas on brokers outside `--broker-list` (or removed), a replaced broker's
   replicas to its replacement (`replace`, and nothing else moves), replicas added or dropped for a
   new replication factor;
3. replicas per broker within 1 of even, with the fewest moves: while some broker holds two or more
   replicas more than another, one replica moves from the fullest broker to the emptiest one that
   may take it — of the topic most over its even share there, the smallest partition first, so
   bytes are minimal too.  Each move lowers the imbalance by one, so the count of moves is the
   least that reaches replica counts within ±1 (see `lower_bound_moves`);
4. every topic's replicas per broker within 1 of even (`topic_balance`): a topic's replica moves
   from the broker holding most of it to the one holding least, alone where the brokers' counts
   stay within 1, else paired with a move of another topic back (two moves, counts unchanged) —
   the only moves beyond the lower bound, and only where a topic is concentrated;
5. preferred leaders (first replicas) per broker within 1 of even, by reordering replica lists
   only, which moves no data: swaps, then augmenting paths for what swaps alone cannot fix;
6. every topic's preferred leaders per broker within 1 of even (`topic_balance`), by reordering too,
   never undoing goal 5.

Replicas keep their list position when they move, so a moved leader's replacement leads.
`order` records which partitions changed first (required moves first), so a plan can be cut into
stages (`kafkatool.cluster.plan_score.stage`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafkatool.cluster.assignment import AssignmentError, BrokerMetadata
from kafkatool.cluster.model import Assignment, TopicPartition


@dataclass(frozen=True)
class Goals:
    """The optional goals and required changes of a plan (see the module's order of goals)."""

    topic_balance: bool = True
    replace: dict[int, int] = field(default_factory=dict)  # OLD -> NEW: only these replicas move
    replication_factor: int | None = None  # for the partitions of `rf_topics`
    rf_topics: frozenset[str] = frozenset()


def plan_minimal(
    current: Assignment,
    brokers: Sequence[BrokerMetadata],
    sizes: dict[TopicPartition, int] | None = None,
    goals: Goals | None = None,
    order: list[TopicPartition] | None = None,
) -> Assignment:
    """A new assignment for `current` over `brokers` (all partitions, changed or not).

    `order`, when given, receives the changed partitions in the order the planner changed them.
    """
    planner = _Planner(current, brokers, sizes or {}, goals or Goals())
    out = planner.run()
    if order is not None:
        order.extend(planner.tps[i] for i in planner.order)
    return out


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


_NEW = -1  # a replica to add (replication factor raised): placed like a replica on a removed broker


class _Planner:
    def __init__(
        self,
        current: Assignment,
        brokers: Sequence[BrokerMetadata],
        sizes: dict[TopicPartition, int],
        goals: Goals,
    ):
        self.goals = goals
        self.tps = sorted(current)
        self.replicas = [list(current[tp]) for tp in self.tps]
        self.order: list[int] = []
        self._ordered: set[int] = set()
        self.topic = [tp.topic for tp in self.tps]
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
        self._change_replication_factor()
        self.tcount: dict[tuple[str, int], int] = {}
        self.thosted: dict[tuple[str, int], set[int]] = {}
        self.btopics: dict[int, dict[str, None]] = {b: {} for b in self.brokers}  # ordered sets
        self.flexcount = dict.fromkeys(self.brokers, 0)
        for i, reps in enumerate(self.replicas):
            if len(set(reps)) > len(self.brokers):
                raise AssignmentError(
                    f"Replication factor: {len(set(reps))} larger than available brokers: {len(self.brokers)}."
                )
            for b in reps:
                if b in self.target:
                    self._host(i, b, +1)
            self._flex_update(i, +1)

    def _host(self, i: int, b: int, delta: int) -> None:
        key = (self.topic[i], b)
        self.count[b] += delta
        n = self.tcount.get(key, 0) + delta
        self.tcount[key] = n
        if delta > 0:
            self.hosted[b].add(i)
            self.thosted.setdefault(key, set()).add(i)
            self.btopics[b][key[0]] = None
        else:
            self.hosted[b].discard(i)
            self.thosted[key].discard(i)
            if n == 0:
                self.btopics[b].pop(key[0], None)

    def _flex(self, i: int, b: int) -> bool:
        """May b's replica of partition i go to a broker of another rack (a rack i is not on, or b's rack
        holds another replica of i)?  A quick filter before `_may_take`."""
        reps = self.replicas[i]
        r = self.rack.get(b)
        return sum(1 for c in reps if self.rack.get(c) == r) >= 2 or len(self._racks(reps)) < self.num_racks

    def _flex_update(self, i: int, delta: int) -> None:
        if self.rack:
            for b in self.replicas[i]:
                if b in self.target and self._flex(i, b):
                    self.flexcount[b] += delta

    def _changed(self, i: int) -> None:
        if i not in self._ordered:
            self._ordered.add(i)
            self.order.append(i)

    def _drop_cost(self, reps: list[int], k: int, load: dict[int, int]) -> tuple[bool, bool, int, int]:
        b = reps[k]
        same_rack = (
            sum(1 for c in reps if self.rack and self.rack.get(c) == self.rack.get(b)) if self.rack else 0
        )
        return (b in self.target, k == 0, -same_rack, -load.get(b, 0))

    def _change_replication_factor(self) -> None:
        """Add placeholders for new replicas; drop surplus ones (never the leader while others can go)."""
        rf = self.goals.replication_factor
        if rf is None:
            return
        if rf > len(self.brokers):
            raise AssignmentError(
                f"Replication factor: {rf} larger than available brokers: {len(self.brokers)}."
            )
        load: dict[int, int] = {}
        for reps in self.replicas:
            for b in reps:
                load[b] = load.get(b, 0) + 1
        for i, reps in enumerate(self.replicas):
            if self.topic[i] not in self.goals.rf_topics or len(reps) == rf:
                continue
            self._changed(i)
            while len(reps) < rf:
                reps.append(_NEW)
            while len(reps) > rf:
                # off the brokers leaving first, never the leader while another can go, then a rack's
                # second replica, then the busiest broker
                k = min(range(len(reps)), key=lambda k, reps=reps: self._drop_cost(reps, k, load))  # type: ignore[misc]
                load[reps[k]] = load.get(reps[k], 0) - 1
                del reps[k]

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
        if not self.rack or self.rack.get(reps[slot]) == self.rack[dst]:
            return True  # same rack (or no racks): the partition's racks stay as they are
        others = [b for k, b in enumerate(reps) if k != slot]
        return len(self._racks(others) | {self.rack[dst]}) >= len(self._racks(reps))

    # -- moves -------------------------------------------------------------------------------

    def _move(self, i: int, slot: int, dst: int) -> None:
        src = self.replicas[i][slot]
        self._flex_update(i, -1)
        if src in self.target:
            self._host(i, src, -1)
        self.replicas[i][slot] = dst
        self._host(i, dst, +1)
        self._flex_update(i, +1)
        self._changed(i)

    def _relocate(self, i: int, slot: int) -> None:
        """A mandatory move: to the emptiest broker that adds a missing rack, else any legal one."""
        reps = self.replicas[i]
        others = [b for k, b in enumerate(reps) if k != slot]
        taken = set(others)
        need_rack = bool(self.rack) and len(self._racks(others)) < self._wanted_spread(i)
        used_racks = self._racks(others)
        new = self.goals.replace.get(reps[slot])
        if new is not None and new in self.target and new not in taken:
            self._move(i, slot, new)
            return
        best = None
        fallback = None
        t = self.topic[i]
        for b in self.brokers:
            if b in taken:
                continue
            key = (self.count[b], self.tcount.get((t, b), 0), b)
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
            dsts = sorted(
                (b for b in self.brokers if self.count[b] <= limit), key=lambda b: (self.count[b], b)
            )
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
        """Move a replica from src to the emptiest destination that may take it: with topic balance, of a
        topic src holds more of than that destination (its smallest partition); else the smallest."""
        src_rack = self.rack.get(src) if self.rack else None
        for dst in dsts:
            other_rack = bool(self.rack) and self.rack[dst] != src_rack
            if other_rack and not self.flexcount[src]:
                continue  # every replica on src is its partition's only one in src's rack
            if self.goals.topic_balance:
                # the topic src holds most more of than dst (ties: by name); the others only if it fails
                tc = self.tcount
                best, best_e = None, -(1 << 62)
                for t in self.btopics[src]:
                    e = tc[(t, src)] - tc.get((t, dst), 0)
                    if e > best_e or (e == best_e and best is not None and t < best):
                        best, best_e = t, e
                if best is not None and self._move_of_topic(best, src, dst, other_rack):
                    return True
                for t in self._by_excess(src, dst, best):
                    if self._move_of_topic(t, src, dst, other_rack):
                        return True
            elif self._move_smallest(self.hosted[src], src, dst, other_rack):  # moves and bytes first
                return True
        return False

    def _by_excess(self, src: int, dst: int, skip: str | None) -> list[str]:
        """src's topics (but `skip`), the one src holds most more of than dst first."""
        tc = self.tcount
        return sorted(
            (t for t in self.btopics[src] if t != skip), key=lambda t: (tc.get((t, dst), 0) - tc[(t, src)], t)
        )

    def _move_of_topic(self, t: str, src: int, dst: int, other_rack: bool) -> bool:
        """Move src's smallest replica of topic t that may go to dst."""
        return self._move_smallest(self.thosted[(t, src)], src, dst, other_rack)

    def _move_smallest(self, hosted: Iterable[int], src: int, dst: int, other_rack: bool) -> bool:
        """Move the smallest of these partitions (src's replicas) that may go to dst."""
        for i in sorted(hosted, key=lambda i: (self.size[i], i)):
            if other_rack and not self._flex(i, src):
                continue
            slot = self.replicas[i].index(src)
            if self._may_take(i, slot, dst):
                self._move(i, slot, dst)
                return True
        return False

    def _excess_key(self, i: int, src: int, dst: int) -> tuple[int, int, int]:
        t = self.topic[i]
        return (self.tcount.get((t, dst), 0) - self.tcount.get((t, src), 0), self.size[i], i)

    # -- topics ------------------------------------------------------------------------------

    def _spread_ok_after(self, src: int, dst: int) -> bool:
        """Are the brokers' replica counts still within 1 (or no worse) after one replica src -> dst?"""
        before = max(self.count.values()) - min(self.count.values())
        self.count[src] -= 1
        self.count[dst] += 1
        after = max(self.count.values()) - min(self.count.values())
        self.count[src] += 1
        self.count[dst] -= 1
        return after <= max(1, before)

    def _topic_move(self, t: str, src: int, dst: int, allow: int) -> int | None:
        """A partition of topic t on src that may move to dst (its smallest), or None.

        `allow`: how far apart (t's count on src minus on dst) the two brokers must be at least."""
        if self.tcount.get((t, src), 0) - self.tcount.get((t, dst), 0) < allow:
            return None
        for i in sorted(self.thosted.get((t, src), ()), key=lambda i: (self.size[i], i)):
            if self._may_take(i, self.replicas[i].index(src), dst):
                return i
        return None

    def _balance_topics(self) -> None:
        """Goal 4: each topic's replicas per broker within 1, keeping the brokers' counts within 1."""
        topics = sorted(set(self.topic))
        for _ in range(sum(len(r) for r in self.replicas) + 1):
            progressed = False
            for t in topics:
                counts = sorted(self.brokers, key=lambda b: (self.tcount.get((t, b), 0), b))
                if self.tcount.get((t, counts[-1]), 0) - self.tcount.get((t, counts[0]), 0) <= 1:
                    continue
                if self._fix_topic(t, counts):
                    progressed = True
            if not progressed:
                return

    def _fix_topic(self, t: str, by_count: list[int]) -> bool:
        for src in reversed(by_count):
            for dst in by_count:
                i = self._topic_move(t, src, dst, 2)
                if i is None:
                    continue
                if self._spread_ok_after(src, dst):
                    self._move(i, self.replicas[i].index(src), dst)
                    return True
                # pair it with a move of another topic back from dst to src: counts unchanged
                for u in sorted(set(self.btopics[dst]) - {t}):
                    j = self._topic_move(u, dst, src, 1)
                    if j is not None:
                        self._move(i, self.replicas[i].index(src), dst)
                        self._move(j, self.replicas[j].index(dst), src)
                        return True
        return False

    # -- leaders -----------------------------------------------------------------------------

    def _balance_leaders(self) -> None:
        lead = dict.fromkeys(self.brokers, 0)
        tlead: dict[tuple[str, int], int] = {}
        for i, reps in enumerate(self.replicas):
            if reps and reps[0] in lead:
                lead[reps[0]] += 1
                tlead[(self.topic[i], reps[0])] = tlead.get((self.topic[i], reps[0]), 0) + 1
        self.tlead = tlead
        topics = self.goals.topic_balance

        def swap(i: int, k: int) -> None:
            reps = self.replicas[i]
            a, c = reps[0], reps[k]
            reps[0], reps[k] = c, a
            lead[a] -= 1
            lead[c] += 1
            t = self.topic[i]
            tlead[(t, a)] -= 1
            tlead[(t, c)] = tlead.get((t, c), 0) + 1
            self._changed(i)

        def tl(t: str, b: int) -> int:
            return tlead.get((t, b), 0)

        for _ in range(len(self.replicas) + 1):
            changed = False
            for i, reps in enumerate(self.replicas):
                a, t = reps[0], self.topic[i]
                cands = [k for k in range(1, len(reps)) if reps[k] in lead]
                # the brokers' leader counts first (goal 5), never making the topic's worse
                best = min(cands, key=lambda k: (lead[reps[k]], tl(t, reps[k]), k), default=None)
                if (
                    best is not None
                    and lead[a] > lead[reps[best]] + 1
                    and (not topics or tl(t, a) > tl(t, reps[best]))
                ):
                    swap(i, best)
                    changed = True
                    continue
                if not topics:
                    continue
                # then the topic's (goal 6), never making the brokers' worse
                best = min(cands, key=lambda k: (tl(t, reps[k]), lead[reps[k]], k), default=None)
                if best is None or tl(t, a) <= tl(t, reps[best]) + 1:
                    continue
                c = reps[best]
                if lead[a] > lead[c]:
                    swap(i, best)
                    changed = True
                    continue
                # the brokers' counts would part: pair it with a swap of another topic back from c to a
                for j in self._led_by(c):
                    u, other = self.topic[j], self.replicas[j]
                    if u != t and a in other and tl(u, c) > tl(u, a):
                        swap(i, best)
                        swap(j, other.index(a))
                        changed = True
                        break
            if not changed:
                break
        self._leader_paths(lead, self.goals.topic_balance)
        self._leader_paths(lead, False)  # goal 5 before goal 6: what topic-neutral paths cannot fix
        if topics:
            self._topic_leader_paths(lead)

    def _topic_leader_paths(self, lead: dict[int, int]) -> None:
        """Goal 6 by chains within a topic: a leads 2+ more of t than z, and leads more overall."""
        by_topic: dict[str, list[int]] = {}
        for i, t in enumerate(self.topic):
            by_topic.setdefault(t, []).append(i)
        for t, parts in sorted(by_topic.items()):
            for _ in range(len(parts) + 1):
                tl = {b: self.tlead.get((t, b), 0) for b in self.brokers}
                hi_b = max(self.brokers, key=lambda b: (tl[b], lead[b], -b))
                if tl[hi_b] - min(tl.values()) <= 1:
                    break
                found = self._topic_path(hi_b, t, parts, tl, lead)
                if found is None:
                    break
                path, back = found
                if back is not None:  # the chain's end gives a leadership of another topic back
                    path = path + [(back, hi_b)]
                for i, new_leader in path:
                    reps = self.replicas[i]
                    old = reps[0]
                    k = reps.index(new_leader)
                    reps[0], reps[k] = new_leader, old
                    u = self.topic[i]
                    self.tlead[(u, old)] -= 1
                    self.tlead[(u, new_leader)] = self.tlead.get((u, new_leader), 0) + 1
                    self._changed(i)
                if back is None:
                    lead[hi_b] -= 1
                    lead[path[-1][1]] += 1

    def _give_back(self, c: int, a: int, t: str) -> int | None:
        """A partition of another topic led by c and hosted by a whose leadership may go to a, neutral
        for its topic (c leads more of it than a)."""
        for j in self._led_by(c):
            u = self.topic[j]
            if u != t and a in self.replicas[j] and self.tlead.get((u, c), 0) > self.tlead.get((u, a), 0):
                return j
        return None

    def _topic_path(
        self, start: int, t: str, parts: list[int], tl: dict[int, int], lead: dict[int, int]
    ) -> tuple[list[tuple[int, int]], int | None] | None:
        prev: dict[int, tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            b = queue.popleft()
            for i in parts:
                reps = self.replicas[i]
                if reps[0] != b:
                    continue
                for c in reps[1:]:
                    if c in prev or c not in self.target:
                        continue
                    prev[c] = (b, i)
                    if tl[c] <= tl[start] - 2:
                        back = None if lead[c] < lead[start] else self._give_back(c, start, t)
                        if lead[c] < lead[start] or back is not None:
                            return _steps_to(prev, c), back
                    queue.append(c)
        return None

    def _led_by(self, b: int) -> list[int]:
        return [i for i in self.hosted[b] if self.replicas[i][0] == b]

    def _leader_paths(self, lead: dict[int, int], topic_neutral: bool) -> None:
        """Shift leadership along chains a→…→z when a leads 2+ more than z and no single swap helps."""
        led_by: dict[int, set[int]] = {b: set() for b in self.brokers}
        for i, reps in enumerate(self.replicas):
            led_by[reps[0]].add(i)
        for _ in range(len(self.replicas) + 1):
            hi_b = max(self.brokers, key=lambda b: (lead[b], -b))
            lo_b = min(self.brokers, key=lambda b: (lead[b], b))
            if lead[hi_b] - lead[lo_b] <= 1:
                return
            path = self._find_path(hi_b, lead, led_by, topic_neutral)
            if path is None:
                return
            for i, new_leader in path:
                reps = self.replicas[i]
                old = reps[0]
                k = reps.index(new_leader)
                reps[0], reps[k] = new_leader, old
                led_by[old].discard(i)
                led_by[new_leader].add(i)
                t = self.topic[i]
                self.tlead[(t, old)] -= 1
                self.tlead[(t, new_leader)] = self.tlead.get((t, new_leader), 0) + 1
                self._changed(i)
            lead[hi_b] -= 1
            lead[path[-1][1]] += 1

    def _find_path(
        self, start: int, lead: dict[int, int], led_by: dict[int, set[int]], topic_neutral: bool
    ) -> list[tuple[int, int]] | None:
        """BFS from `start` over "b leads partition i hosted by c" to a broker leading ≤ lead[start]-2."""
        goal = lead[start] - 2
        prev: dict[int, tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            b = queue.popleft()
            for i in led_by[b]:
                t = self.topic[i]
                for c in self.replicas[i][1:]:
                    if c in prev or c not in self.target:
                        continue
                    if topic_neutral and self.tlead.get((t, b), 0) <= self.tlead.get((t, c), 0):
                        continue  # this step would leave topic t's leaders further apart
                    prev[c] = (b, i)
                    if lead[c] <= goal:
                        return _steps_to(prev, c)
                    queue.append(c)
        return None

    def run(self) -> Assignment:
        self._mandatory()
        if not self.goals.replace:
            self._balance()
            if self.goals.topic_balance:
                self._balance_topics()
            self._balance_leaders()
        return {tp: reps for tp, reps in zip(self.tps, self.replicas, strict=True)}


def _steps_to(prev: dict[int, tuple[int, int] | None], node: int) -> list[tuple[int, int]]:
    """The search's way to `node`, from its start: each step (partition, the broker it hands leadership to)."""
    path: list[tuple[int, int]] = []
    while (step := prev[node]) is not None:
        pb, pi = step
        path.append((pi, node))
        node = pb
    path.reverse()
    return path
