"""Rollout records and the replay check on TRL's trainer (sections 17.6.1, 17.5.2; table 6).

TRL's ``GRPOTrainer`` samples with transformers' ``generate``, which hands back no log-probs, and computes its
ratio's numerator in a forward pass of its own. :func:`recording_trainer` subclasses it so that the TRL engine
keeps what our engine keeps:

- **records**: right after each generation, before any update, every sampled completion is scored with the
  weights that sampled it, in eval mode, under the run's sampling configuration
  (:func:`rlvr_lab.policy.completion_logprobs`, the function our engine's records and
  :func:`~rlvr_lab.train.rollout.replay_max_deviation` use). One :class:`~rlvr_lab.records.RolloutRecord` per
  completion goes to ``records.jsonl``, with the exact prompt token ids TRL delivered, the sampled ids, those
  behaviour log-probs, the policy version (TRL's optimizer step), the verdict the reward function got and
  whether the group entered the update.
- **replay**: at the first optimizer pass over a generation (the weights are still the sampling ones: TRL
  samples and updates in lockstep), TRL's own per-token log-probs of the sampled tokens (the ratio's numerator,
  in train mode, in TRL's left-padded batch) are compared with the same tokens' scores at sampling. A deviation
  above :func:`~rlvr_lab.train.learner.replay_limit` stops the run with
  :class:`~rlvr_lab.train.learner.ReplayMismatch`: train-mode randomness (dropout left on), padding or
  positions that change the function, or weights that moved between sampling and update.

TRL's numerator is the temperature-scaled softmax; with top-k or top-p truncation on, the records keep the
truncated distribution (what ``generate`` sampled from) and the check compares TRL's numerator with TRL's own
scoring at sampling, one more forward pass per generation.
"""

from __future__ import annotations

import torch

from rlvr_lab.policy import SamplingConfig, completion_logprobs
from rlvr_lab.records import Invocation, write_records
from rlvr_lab.scoring_mode import scoring_mode
from rlvr_lab.train.learner import check_replay
from rlvr_lab.train.rollout import new_record


#: The key under which a generation's log-probs at sampling ride in TRL's batch until its first pass.
REPLAY_KEY = "rlvr_replay_logps"


class GradedBatch:
    """What the reward function saw for the last generation: per completion, the verdict and the reward that
    entered the update (None when unresolved or its group was excluded). The reward function fills it; the
    recording trainer reads it right after TRL's generation and scoring."""

    def __init__(self):
        self.verdicts: list = []
        self.rewards: list = []

    def put(self, verdicts: list, rewards: list) -> None:
        self.verdicts, self.rewards = list(verdicts), list(rewards)


def completion_slices(ids: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
    """The unpadded rows of a padded (B, T) id tensor: ``ids[i][mask[i] == 1]`` as lists."""
    return [row[m.bool()].tolist() for row, m in zip(ids.cpu(), mask.cpu())]


def behaviour_logprobs(model, prompts: list[list[int]], completions: list[list[int]], cfg: SamplingConfig, pad_id):
    """Per completion, the log-prob of each sampled token under ``cfg``'s transformed distribution (nats),
    scored in eval mode on the unpadded prompt + completion: a list of B lists, completion lengths."""
    sequences = [p + c for p, c in zip(prompts, completions)]
    masks = [[0] * len(p) + [1] * len(c) for p, c in zip(prompts, completions)]
    with torch.no_grad():
        logp, _ = completion_logprobs(model, sequences, masks, cfg, pad_id)
    rows = logp.float().cpu()
    return [rows[i, len(p) - 1 : len(p) - 1 + len(c)].tolist() for i, (p, c) in enumerate(zip(prompts, completions))]


def rows_to_padded(rows: list[list[float]], width: int, device) -> torch.Tensor:
    """Right-pad per-row log-prob lists to (B, ``width``) with zeros (TRL's completion layout)."""
    out = torch.zeros((len(rows), width), dtype=torch.float32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row[:width], dtype=torch.float32)
    return out.to(device)


def population_advantages(rewards: list, group_size: int, scale: str = "group") -> torch.Tensor:
    """Eq 2 with the population std (the chapter's), over groups of ``group_size`` consecutive rewards, as
    a (B,) tensor; ``scale`` as :func:`rlvr_lab.advantages.group_advantages` (``batch``: one std over the
    resolved groups). A group with an unresolved member (None: the reward function excluded it whole) gets
    zeros, as TRL gives an unscored group.

    >>> [round(a, 4) for a in population_advantages([1.0, 0.0, 0.0, None, None, None], 3).tolist()]
    [1.4142, -0.7071, -0.7071, 0.0, 0.0, 0.0]
    """
    from rlvr_lab.advantages import group_advantages

    if group_size < 1 or len(rewards) % group_size:
        raise ValueError(f"rewards ({len(rewards)}) must be whole groups of group_size {group_size}")
    groups = [rewards[start : start + group_size] for start in range(0, len(rewards), group_size)]
    resolved = [g for g in groups if all(r is not None for r in g)]
    scaled = iter(group_advantages(resolved, scale=scale).tolist() if resolved else [])
    out = []
    for g in groups:
        out += next(scaled) if all(r is not None for r in g) else [0.0] * group_size
    return torch.tensor(out, dtype=torch.float32)


def replay_checking(base):
    """A subclass of TRL's ``GRPOTrainer`` (``base``) with the replay check of the module docstring.

    A generation's log-probs at sampling ride in its batch under :data:`REPLAY_KEY` (the subclass's
    ``_generate_and_score_completions`` puts them there); at TRL's first pass over it, TRL's own log-probs of
    the scored tokens (``completion_mask``, times ``tool_mask`` where the batch has one: the policy's own
    tokens of a multi-turn completion) must match within ``self.replay_limit`` nats, else
    :class:`~rlvr_lab.train.learner.ReplayMismatch`. Each deviation is kept in ``replay_devs`` and logged.
    """

    class ReplayCheckingTrainer(base):
        def __init__(self, *args, replay_limit, **kwargs):
            super().__init__(*args, **kwargs)
            self.replay_limit = replay_limit
            self.replay_devs: list[float] = []
            self._replay_due = None  # (log-probs at sampling (B, C), scored-token mask) during a first pass

        def _compute_loss(self, model, inputs):
            due = inputs.pop(REPLAY_KEY, None)  # TRL reuses this dict for its later passes: checked once
            if due is not None:
                mask = inputs["completion_mask"]
                self._replay_due = (due, mask * inputs["tool_mask"] if "tool_mask" in inputs else mask)
            return super()._compute_loss(model, inputs)

        def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, *a, **kw):
            logps, entropies, aux = super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, *a, **kw
            )
            if self._replay_due is not None and kw.get("compute_entropy"):  # the loss's pass, not a scoring one
                at_sampling, mask = self._replay_due
                self._replay_due = None
                dev = float(((logps.detach().float() - at_sampling).abs() * mask).max())
                self.replay_devs.append(dev)
                self._metrics["train"]["replay_max_dev"].append(dev)
                check_replay(dev, self.replay_limit)
            return logps, entropies, aux

    return ReplayCheckingTrainer


def recording_trainer(base):
    """A subclass of TRL's ``GRPOTrainer`` (``base``) that writes rollout records and checks replay.

    Construct it as the base class, plus ``records_path``, ``graded`` (a :class:`GradedBatch` the reward
    function fills), ``tasks`` (the training tasks in dataset order, to name each record's task), ``sampling``
    (the run's :class:`~rlvr_lab.policy.SamplingConfig`), ``tokenizer_digest``, ``replay_limit`` (nats),
    ``group_size``, ``population_std`` (True: eq 2's advantages with the population std replace TRL's,
    which use the sample std) and ``scale`` (eq 2's divisor, as ``TrainConfig.scale``).
    """

    class RecordingGRPOTrainer(replay_checking(base)):
        def __init__(
            self,
            *args,
            records_path,
            graded,
            tasks_by_id,
            sampling,
            tokenizer_digest,
            group_size,
            population_std=False,
            scale="group",
            **kwargs,
        ):
            super().__init__(*args, **kwargs)
            self.records_path, self.graded, self.tasks_by_id = records_path, graded, tasks_by_id
            self.sampling, self.digest = sampling, tokenizer_digest
            self.group_size = group_size
            self.records_written = 0
            self.population_std, self.scale = population_std, scale

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            if self.population_std:  # eq 2 as the chapter writes it, in place of TRL's sample-std advantages
                out["advantages"] = population_advantages(self.graded.rewards, self.group_size, self.scale).to(
                    out["advantages"]
                )
            prompts = completion_slices(out["prompt_ids"], out["prompt_mask"])
            completions = completion_slices(out["completion_ids"], out["completion_mask"])
            pad_id = self.processing_class.pad_token_id
            model = self.accelerator.unwrap_model(self.model)
            with scoring_mode(model):
                behaviour = behaviour_logprobs(model, prompts, completions, self.sampling, pad_id)
                width = out["completion_ids"].size(1)
                if self.sampling.top_k or self.sampling.top_p < 1.0:  # TRL's numerator is untruncated
                    ids = torch.cat([out["prompt_ids"], out["completion_ids"]], dim=1)
                    attn = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
                    with torch.no_grad():
                        at_sampling, _, _ = self._get_per_token_logps_and_entropies(self.model, ids, attn, width)
                else:
                    at_sampling = rows_to_padded(behaviour, width, out["completion_ids"].device)
            # rides in the batch, so TRL's shuffle and split keep it beside its rows; the first pass takes it
            out[REPLAY_KEY] = at_sampling.float()
            self._write(inputs, prompts, completions, behaviour)
            return out

        def _write(self, inputs, prompts, completions, behaviour):
            step, eos = self.state.global_step, set(self.eos_token_ids)
            verdicts, rewards = self.graded.verdicts, self.graded.rewards
            if len(verdicts) != len(completions):
                raise RuntimeError(
                    f"the reward function graded {len(verdicts)} completions of a generation of {len(completions)}"
                )
            records = []
            for i, (x, p, c, lp) in enumerate(zip(inputs, prompts, completions, behaviour)):
                task, verdict = self.tasks_by_id[x["task_id"]], verdicts[i]
                g, r = divmod(i, self.group_size)
                stop = "eos" if c and c[-1] in eos else "length"
                text = self.processing_class.decode(c, skip_special_tokens=True)
                call = Invocation(0, p, c, lp, step, stop)
                record = new_record(task, f"trl{step}-g{g}", r, step, self.sampling, self.digest, [call], text, step)
                record.verdict, record.reward, record.evidence = verdict.outcome, rewards[i], verdict.to_dict()
                record.admitted = rewards[i] is not None
                record.exclusion_reason = "" if record.admitted else "unresolved member in group"
                records.append(record)
            write_records(self.records_path, records)
            self.records_written += len(records)

    return RecordingGRPOTrainer
