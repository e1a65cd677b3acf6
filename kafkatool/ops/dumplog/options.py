"""What a dump is asked to do and what it found: Kafka's DumpLogSegmentsOptions, plus the result.

DumpOptions carries the tool's switches with the implications Kafka's options apply (a decoder
implies printing, printing implies deep iteration), the output form (text or JSON) and the Kafka
release whose text is printed; DumpResult counts and collects the Problems and maps them to an exit
code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkatool.ops.dumplog.decoders import resolve_decoder
from kafkatool.ops.dumplog_text import DumpText
from kafkatool.release import Release, parse_release, resolve, text_release

INT32_MAX = 2**31 - 1
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024


@dataclass
class DumpOptions:
    """Kafka's DumpLogSegments options (any decoder implies print, print implies deep)."""

    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_bytes: int = INT32_MAX
    skip_record_metadata: bool = False
    # "offsets" | "transaction" | "cluster-metadata" | "remote-log-metadata" | "share-group-state"
    payload_decoder: str | None = None
    key_decoder: str = "string"
    value_decoder: str = "string"
    output: str = "text"  # text | json | ndjson
    per_record: bool = False  # JSON: one object per record instead of per batch
    jobs: int = 0  # processes for deep/print text on big logs (0: one per CPU; 1: this process only)
    #: whose tool text to print (3.3 or 4.0, or a string naming one; see kafkatool.release);
    #: None: the process-wide choice.  A Release after construction.
    kafka_release: Release | str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.kafka_release, str):
            self.kafka_release = resolve(self.kafka_release)[0]
        elif self.kafka_release is None:
            self.kafka_release = text_release()
        if self.payload_decoder:
            self.print_data_log = True
        if self.print_data_log or self.verify_index_only or self.index_sanity_check:
            pass
        if self.print_data_log:
            self.deep_iteration = True
        self.key_decoder = resolve_decoder(self.key_decoder)
        self.value_decoder = resolve_decoder(self.value_decoder)
        if self.key_decoder != "string" or self.value_decoder != "string":
            self.print_data_log = True
            self.deep_iteration = True

    @property
    def release(self) -> Release:
        """The Kafka release whose text is printed (`kafka_release` once resolved)."""
        rel = self.kafka_release
        return rel if isinstance(rel, Release) else parse_release(rel) if rel else text_release()

    @property
    def text(self) -> DumpText:
        """The text choices of the chosen release's kafka-dump-log (`dumplog_text`)."""
        return DumpText.of(self.release)

    @property
    def kafka4(self) -> bool:
        """Print Kafka 4.x's text (else 3.3's)."""
        return self.release.at_least("4.0")


@dataclass
class Problem:
    """Something wrong found while dumping; `kind` is stable for JSON consumers."""

    file: str
    kind: str
    message: str
    fatal: bool = False  # reading stopped here (Kafka's tool would have crashed)


@dataclass
class DumpResult:
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    batches: int = 0
    records: int = 0
    bytes_read: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def exit_code(self) -> int:
        """0: Kafka's tool would have succeeded; 1: a file was corrupt past reading; 2: bad input;
        3: a file changed while it was read (another process renamed, replaced or truncated it)."""
        kinds = {p.kind for p in self.problems if p.fatal}
        if "changed" in kinds:
            return 3
        if "io" in kinds or "input" in kinds:
            return 2
        return 1 if kinds else 0
