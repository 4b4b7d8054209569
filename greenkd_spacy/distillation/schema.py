"""The [distillation] section of a student config, validated as spaCy validates
[training] (ConfigSchemaTraining): types, ranges and no unknown setting."""
from typing import Dict, List, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, StrictBool, StrictInt, StrictStr
from spacy.schemas import Batcher
from thinc.api import Optimizer

from ..bench import MIN_TIMED_WORDS

Number = Union[StrictInt, float]


class ConfigSchemaDistill(BaseModel):
    # fmt: off
    corpus: StrictStr = Field("corpora.train", title="Path in the config to the distillation corpus (gold, raw text or both)")
    dropout: Number = Field(0.0, ge=0.0, lt=1.0, title="Student dropout while distilling")
    max_epochs: StrictInt = Field(0, ge=-1, title="Passes over the corpus (0: no limit; -1: stream it, unshuffled, memory flat)")
    max_steps: StrictInt = Field(1000, ge=0, title="Update steps (0: no limit)")
    eval_frequency: StrictInt = Field(200, gt=0, title="Steps between evaluations and checkpoints")
    patience: StrictInt = Field(0, ge=0, title="Stop after this many steps without a better dev score, as [training] patience (0: never)")
    gold_weight: Number = Field(1.0, ge=0.0, title="Weight of the loss on gold annotation, where the corpus has it")
    gold_weights: Dict[StrictStr, NonNegativeFloat] = Field({}, title="Student component name -> its own gold weight instead of gold_weight (e.g. morphologizer = 3: more gold where the teacher is weaker than the corpus)")
    teacher_weights: Dict[StrictStr, NonNegativeFloat] = Field({}, title="Student component name -> the weight of its teacher's targets (default 1; 0: it learns from the corpus's gold alone, where the teacher is below a gold-trained model on it). Soft-target students only: spaCy's tagger, morphologizer, senter and the text classifiers")
    temperature: Number = Field(1.0, gt=0.0, title="Softmax temperature of teacher and student distributions")
    top_k: StrictInt = Field(8, ge=0, title="Heads per token kept in the parser's cached targets (0: all)")
    shard_size: StrictInt = Field(2000, gt=0, title="Examples per teacher-cache shard")
    cache_dir: StrictStr = Field("teacher_cache", title="Root directory of the teacher cache")
    student_to_teacher: Dict[StrictStr, StrictStr] = Field({}, title="Student component name -> teacher component name")
    heldout: StrictInt = Field(500, ge=0, title="Texts at the start of the distillation corpus held out as the dev set and labelled by the teacher, when the dev corpus has no path (0: a dev corpus is required)")
    report_min_words: StrictInt = Field(MIN_TIMED_WORDS, gt=0, title="Words each timed pass of the end-of-run report covers (the dev texts repeated; 3 passes per pipeline, the fastest counts)")
    copy_from_teacher: Optional[List[StrictStr]] = Field(None, title="Teacher components copied into the student as they are (null: every one that cannot be trained and that the student lacks)")
    teacher_tokenizer: StrictBool = Field(True, title="The student tokenizes as its teacher: the teacher's tokenizer rules, exceptions and special cases are loaded into the student's before anything is read, where both are spaCy's rule tokenizer (plain or greenkd.CachedTokenizer.v1); false: the student's config alone decides")
    batch_attribute_ruler: StrictBool = Field(True, title="A copied attribute_ruler runs as greenkd_attribute_ruler: the same patterns and annotations, set a batch at a time (false: spaCy's own component)")
    hidden_weight: Number = Field(0.0, ge=0.0, title="Weight of the hidden-state loss: the student's shared tok2vec learns the teacher encoder's per-token output through a linear map (cosine; 0: off)")
    hidden_dims: StrictInt = Field(128, gt=0, title="Width the teacher's encoder vectors are projected to (fixed random orthonormal map) in the teacher cache")
    hidden_encoder: Optional[StrictStr] = Field(None, title="The student's shared tok2vec that learns the hidden states (null: its one tok2vec that components listen to)")
    seed: Optional[StrictInt] = Field(None, title="Random seed (default: [training] seed)")
    optimizer: Optimizer = Field(..., title="The optimizer of the student")
    batcher: Batcher = Field(..., title="Batcher for the distillation corpus")
    # fmt: on

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


DEFAULTS = {
    name: field.default
    for name, field in ConfigSchemaDistill.model_fields.items()
    if not field.is_required()
}
