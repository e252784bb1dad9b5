"""How two requests' engine steps reach one server at once, in the `concurrent` mode.

A server's scheduler steps every running request in turn; how many tokens each step brings differs
(speculative decoding, prefill, stop conditions), so which request's delta comes next varies. The schedule
here spreads the partner's steps evenly across the case's: whatever phase the case's stream is in (reasoning,
a call's arguments, narration after it), the partner's deltas arrive in between. Each stream's finish comes
right after its own last step, as the server sends it.
"""

from __future__ import annotations

from dataclasses import dataclass

CASE, PARTNER = 0, 1  # which request a step belongs to

# the partner is the first of these the parser grades, other than the case itself: reasoning and a call (every
# state a reasoning-and-tool pipeline has), else two calls, else reasoning alone (a reasoning parser graded
# without a tool parser), else one call
PARTNERS = ("reasoning.then_tool", "tool.parallel", "reasoning.only", "tool.single", "tool.none")

# cases the concurrent mode leaves out, and why
NOT_INTERLEAVED = {
    "tool.long_args": "the concurrent mode grades state kept between requests, not size: tool.long_args is "
                      "tool.single's shape at 16 KiB, and streaming it token by token a second time would double "
                      "the most expensive cell of the quadratic parsers",
}


@dataclass(frozen=True)
class Step:
    """One call into the server: `stream`'s chunk `index`, or its finish (`index` None)."""

    stream: int
    index: int | None


def schedule(case_steps: int, partner_steps: int) -> tuple[Step, ...]:
    """Both requests' chunks and finishes in the order the server receives them: at each point the request
    less far through its own steps goes next (the case on a tie)."""
    counts, done = (case_steps, partner_steps), [0, 0]
    order: list[Step] = []
    while done[CASE] < counts[CASE] or done[PARTNER] < counts[PARTNER]:
        progress = [(done[s] + 1) / counts[s] if done[s] < counts[s] else 2.0 for s in (CASE, PARTNER)]
        stream = CASE if progress[CASE] <= progress[PARTNER] else PARTNER
        order.append(Step(stream, done[stream]))
        done[stream] += 1
        if done[stream] == counts[stream]:
            order.append(Step(stream, None))
    for stream in (CASE, PARTNER):  # a request with no chunk at all still finishes
        if counts[stream] == 0:
            order.append(Step(stream, None))
    return tuple(order)
