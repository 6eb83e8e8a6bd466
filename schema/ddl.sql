-- DuckDB schema of the rulings database. pipeline/load.py reads each table's
-- columns from here and fills them with one row builder per table. A build
-- writes a new file in batches and renames it over the old one when complete;
-- a refresh writes in place, in one transaction.

CREATE TABLE IF NOT EXISTS sources (
    source_id   VARCHAR PRIMARY KEY,   -- stable id from corpus/manifest.tsv
    url         VARCHAR,
    language    VARCHAR,               -- zh | en
    script      VARCHAR,               -- Hans | Hant | Latn
    region      VARCHAR,               -- CN | TW | HK | ''
    format      VARCHAR,               -- html | text | markdown
    licence     VARCHAR,
    path        VARCHAR,               -- snapshot path inside corpus/
    fetchable   BOOLEAN,               -- may `rulings refresh` fetch the URL again
    notes       VARCHAR
);

CREATE TABLE IF NOT EXISTS runs (
    run_id      INTEGER PRIMARY KEY,
    kind        VARCHAR,               -- build | refresh
    started_at  TIMESTAMP,
    ended_at    TIMESTAMP,
    tried       INTEGER,
    unchanged   INTEGER,
    changed     INTEGER,
    failed      INTEGER,
    details     VARCHAR                -- JSON: per-source outcome and reason
);

CREATE TABLE IF NOT EXISTS snapshots (
    source_id     VARCHAR,
    content_hash  VARCHAR,             -- sha256 of the page bytes
    bytes         BIGINT,
    fetched_at    TIMESTAMP,
    http_status   INTEGER,
    etag          VARCHAR,
    last_modified VARCHAR,
    run_id        INTEGER,
    in_force      BOOLEAN,             -- the snapshot in force for the source
    PRIMARY KEY (source_id, content_hash)
);

CREATE TABLE IF NOT EXISTS records (
    -- stable: source, section path, normalized text (one ruling: a line, list item, paragraph or table row
    -- as the page writes it). Unique, checked after each load by a GROUP BY (pipeline/load.py
    -- check_unique_records), not by a primary key, whose index outgrew DuckDB's memory on large corpora.
    record_id      VARCHAR,
    source_id      VARCHAR,
    seq            INTEGER,             -- position in the page
    block          INTEGER,
    section_path   VARCHAR,             -- headings joined by ' / '
    role           VARCHAR,             -- principle | example | note (a footnote of the ruling parent_id)
    channel        VARCHAR,             -- yearly logs: email | database | wiki | ruling_changed | under_review_confirmed
    status         VARCHAR,             -- current | superseded (struck through) | pending (调整中)
    withdrawn      VARCHAR,             -- the struck-through part of a record otherwise current ('' if none)
    parent_id      VARCHAR,             -- the record of the list item this one is nested in, or that a note
                                        -- belongs to (NULL if none)
    -- as on the page: one ruling with all its sentences. Stored uncompressed: the read commands fetch a
    -- few rulings' texts by id, and DuckDB's dictionary+FSST segments are decoded whole on each such
    -- fetch (a card's 30 rulings cost 3 times the instructions; DuckDB 1.4+ reads the clause)
    text           VARCHAR USING COMPRESSION uncompressed,
    cells          VARCHAR[],           -- a table row's cells, each its own field (text joins them with ' | ')
    norm_text      VARCHAR,             -- Simplified script, canonical terms
    snapshot_hash  VARCHAR,
    first_seen_run INTEGER,
    retired_run    INTEGER              -- NULL while the ruling is on its page
);

-- What each refresh did to the records (pipeline/refresh.py); a build starts
-- the history afresh. change: added (new or back on its page), changed (same
-- id, other status, dates, cards or statements), retired (gone from its page).
CREATE TABLE IF NOT EXISTS record_changes (
    run_id     INTEGER,
    record_id  VARCHAR,
    source_id  VARCHAR,
    change     VARCHAR
);

CREATE TABLE IF NOT EXISTS record_dates (
    record_id    VARCHAR,
    ord          INTEGER,
    raw          VARCHAR,               -- the token as written: 17/3/24
    date         DATE,                  -- NULL when invalid
    valid        BOOLEAN,
    reason       VARCHAR,               -- why invalid
    from_heading BOOLEAN,               -- yearly logs: date of the day heading
    kind         VARCHAR,               -- own | reference (a date the ruling refers to: 详见…的裁定) | heading
    faq_id       VARCHAR,               -- official FAQ id (fid=NNNNN) behind the date
    faq_url      VARCHAR
);

CREATE TABLE IF NOT EXISTS card_mentions (
    record_id    VARCHAR,
    ord          INTEGER,
    name         VARCHAR,               -- as quoted
    norm_name    VARCHAR,               -- Simplified script
    match_key    VARCHAR,               -- search key: name_key() of the name (script, width, case, terms folded)
    url          VARCHAR,
    passcode     INTEGER,               -- the card's main passcode; NULL when not linked or the card has none
    name_en      VARCHAR,
    linked_by    VARCHAR,               -- exact | key | loose | fuzzy | NULL
    name_source  VARCHAR,               -- the name that matched: official | community | NULL
    kind         VARCHAR,               -- card | archetype (「女武神」怪兽: a family, never linked to one card) |
                                        -- term (「攻击力·守备力」: a quoted game term, not a card) |
                                        -- token (「勇者衍生物」: a Token, which is no card)
    quote        VARCHAR,               -- the quote marks: 「」 (or “”, 《》 around a known card's name)
    konami_id    INTEGER                -- the card (official database id); NULL when not linked
);

-- Every official and community card name with its search key, so plain DuckDB
-- users can look a name up in any script: WHERE name_key = (SELECT name_key
-- FROM card_names WHERE name = '月之書'), or join card_mentions on match_key.
CREATE TABLE IF NOT EXISTS card_names (
    passcode     INTEGER,               -- one of the card's passcodes (a row per passcode); NULL when it has none
    konami_id    INTEGER,               -- the card: one Konami id, all its passcodes
    language     VARCHAR,               -- en | ja | zh-CN | zh-TW | ko | zh-community | zh-quoted (other cards' texts)
    -- name and name_key uncompressed, as records.text: `rulings card` reads one card's rows by konami_id
    name         VARCHAR USING COMPRESSION uncompressed,
    name_key     VARCHAR USING COMPRESSION uncompressed,  -- name_key(): Chinese folded to Simplified, width,
                                                           -- case, regional terms
    loose_key    VARCHAR                -- name_key without separators, hyphens, quotes, 之/的/の; & -> and
);

CREATE TABLE IF NOT EXISTS statements (
    record_id    VARCHAR,
    info_kind    VARCHAR,
    event        VARCHAR,
    verdict      VARCHAR,               -- kept | lost | not_applicable
    condition    VARCHAR,               -- '' or the stated condition
    basis        VARCHAR,               -- stated | example | withdrawn (said by a struck-through sentence) | exception (但是…: never decides) |
                                        -- card_text (a ruling on a named card's effect: the kinds its text depends on)
    principle_id VARCHAR,               -- for examples: the record they illustrate
    dates        DATE[],                -- dates of the sentences that state it (empty: the record's dates)
    reading      VARCHAR,               -- principle | case | outcome: how it was read (weighs it in compile)
    effect       VARCHAR,               -- basis card_text: the effect cited, as numbered on the card ('②'); else NULL
    passcode     INTEGER                -- basis card_text: the card whose effect it is (card_effects.passcode)
);

-- Rulings on a named card's numbered effect after a retention event (pipeline/effectrulings.py), read per
-- record with the record's linked card mentions: one row per ruling of a current record that writes a
-- circled number (①-⑳). The engines' card table (pipeline/cardengine.py) is made from them.
CREATE TABLE IF NOT EXISTS effect_rulings (
    record_id    VARCHAR,
    ord          INTEGER,               -- position among the record's rulings, as read
    passcode     INTEGER,               -- the card whose effect it is (card_mentions.passcode)
    effect       VARCHAR,               -- the number as printed: '②'
    events       VARCHAR[],             -- the main events named: face_down | temp_banish (empty: a flip only)
    flip         BOOLEAN,               -- whether the ruling names a flip (flip_face_up)
    can          BOOLEAN,               -- true: the effect can be activated / applied; false: it cannot
    date         DATE                   -- the record's latest valid own or heading date; NULL when undated
);

-- The texts of the cards the corpus names (corpus/data/card-texts.jsonl.gz, from YAML Yugi: pipeline/cardtext.py),
-- one row per card and language: ja, zh-community (the OurOCG wording Chinese pages quote), zh-CN, zh-TW, en.
CREATE TABLE IF NOT EXISTS card_texts (
    passcode        INTEGER,
    konami_id       INTEGER,
    language        VARCHAR,
    name            VARCHAR,
    text            VARCHAR,            -- the card's text (a Pendulum monster's monster effect)
    pendulum_effect VARCHAR             -- a Pendulum monster's pendulum effect, else NULL
);

-- Each card text cut into its numbered effects (①②③…), aligned across languages by the number.
CREATE TABLE IF NOT EXISTS card_effects (
    passcode    INTEGER,
    part        VARCHAR,                -- monster (the card's text) | pendulum (a Pendulum monster's pendulum effect)
    effect      VARCHAR,                -- the number as printed: '②'; '' for the text before the first number
                                        -- (summon conditions, materials) or a text without numbers
    ord         INTEGER,                -- position in the part
    text_ja     VARCHAR,
    text_zh     VARCHAR,                -- the community wording (zh-community), else the official Simplified text
    text_zh_tw  VARCHAR,
    text_en     VARCHAR                 -- English is not numbered: only for a part of one effect
);

-- What information (a vocabulary info kind) each effect depends on, read from its text with
-- schema/card_text_terms.json: 『S召喚したこのカード』 -> synchro_summoned; one row per kind and language that says it.
CREATE TABLE IF NOT EXISTS effect_dependencies (
    passcode    INTEGER,
    part        VARCHAR,
    effect      VARCHAR,
    info_kind   VARCHAR,
    language    VARCHAR,                -- ja | zh-community | zh-CN | zh-TW: the text that says it
    words       VARCHAR,                -- the words that matched
    subject     VARCHAR                 -- this_card (the words name the card: このカード, 这张卡) | other (the monster
                                        -- 『この効果で特殊召喚したモンスター』: another card's information)
);

CREATE TABLE IF NOT EXISTS rules (
    info_kind    VARCHAR,
    event        VARCHAR,
    verdict      VARCHAR,               -- kept | lost | not_applicable | conditional | unknown
    condition    VARCHAR,
    latest_date  DATE,
    changed_on   DATE,                  -- date of the ruling that overrode an earlier verdict
    record_ids   VARCHAR[],
    dates        DATE[],
    -- overridden verdicts, each with the records that state it and their latest date
    conflicts    STRUCT(verdict VARCHAR, record_ids VARCHAR[], latest_date DATE)[],
    -- newer rulings that disagree with the verdict without changing it (schema/rule_policy.json): review them
    disputed_by  VARCHAR[],
    -- a conditional rule's verdict per case (schema/rule_policy.json cases: a fact of the monster and its values)
    cases        STRUCT(case_id VARCHAR, fact VARCHAR, "values" VARCHAR[], verdict VARCHAR, record_ids VARCHAR[],
                        condition VARCHAR, disputed_by VARCHAR[])[],
    PRIMARY KEY (info_kind, event)
);

-- The rulings against the simulators (pipeline/simulators.py over schema/simulators/*.json), written with the
-- rules: per (info kind, event, simulator core) the rules table's verdict, the verdict the core's code gives
-- (kept | lost | not_applicable | not_modelled) and whether they agree (NULL: not modelled, or the rulings have
-- no verdict; a conditional rule agrees only when every case has the core's verdict).
CREATE TABLE IF NOT EXISTS simulator_verdicts (
    info_kind         VARCHAR,
    event             VARCHAR,
    simulator         VARCHAR,          -- ygopro-core | edopro-core (schema/simulators/<simulator>.json)
    rulings_verdict   VARCHAR,          -- rules.verdict
    latest_date       DATE,             -- rules.latest_date
    record_ids        VARCHAR[],        -- rules.record_ids
    verdict           VARCHAR,          -- the simulator core's verdict, from its code
    agrees            BOOLEAN,
    cases_disagreeing VARCHAR[],        -- a conditional rule's cases whose verdict is not the core's
    storage           VARCHAR,          -- where the core keeps it: summon_info, status_bits, effect_reset, ...
    evidence          STRUCT(file VARCHAR, line INTEGER, lines VARCHAR[])[],  -- lines of the pinned source
    note              VARCHAR,
    source_commit     VARCHAR,          -- the pinned commit of the simulator's source
    PRIMARY KEY (info_kind, event, simulator)
);

-- The rules whose verdict changed or became disputed in a build or refresh, against the
-- rules the database held before it: what a maintainer reads before publishing the engine.
CREATE TABLE IF NOT EXISTS rule_changes (
    run_id       INTEGER,
    info_kind    VARCHAR,
    event        VARCHAR,
    case_id      VARCHAR,               -- '' for the rule, else the case of a conditional rule the change is in
    change       VARCHAR,               -- verdict | disputed | settled (no longer disputed)
    old_verdict  VARCHAR,               -- NULL when the database held no rules before
    new_verdict  VARCHAR,
    record_ids   VARCHAR[]              -- the rulings behind the change (the new verdict's, or the disputing ones)
);

CREATE TABLE IF NOT EXISTS rule_citations (
    info_kind  VARCHAR,
    event      VARCHAR,
    record_id  VARCHAR,
    role       VARCHAR,                 -- supports | conflicts | superseded
    verdict    VARCHAR,
    date       DATE,                    -- the latest of dates
    source_id  VARCHAR,
    dates      DATE[]                   -- the dates of the record's sentences that make the statement
);

CREATE TABLE IF NOT EXISTS procedural_rules (
    rule_id    VARCHAR PRIMARY KEY,
    summary    VARCHAR,
    record_ids VARCHAR[]
);

CREATE TABLE IF NOT EXISTS build_info (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);
