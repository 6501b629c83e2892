"""Plans: an ordered release of registered methods (``redact+glm``), each step fitted on the data as the steps
before it released it; a plan is a `Protector` like any method (`engine.protect.plan.method`)."""

from engine.protect.plan.method import Plan, PlanFitted, PlanStep, plan_class
from engine.protect.plan.steps import KnobValues, StepParam, is_plan, plan_steps

__all__ = ["KnobValues", "Plan", "PlanFitted", "PlanStep", "StepParam", "is_plan", "plan_class", "plan_steps"]
