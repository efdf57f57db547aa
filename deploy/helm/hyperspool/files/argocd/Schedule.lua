-- A Hyperspool Schedule's health, from its Ready condition: Healthy while it ticks (with its next
-- tick), Suspended while spec.suspend holds it (on purpose, until someone resumes it), Degraded when
-- it cannot tick (its Workflow or its script missing, a cron that does not parse).
local hs = {}
local status = obj.status
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Hyperspool operator to check the Schedule"
  return hs
end
if obj.metadata.generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < obj.metadata.generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the Hyperspool operator to check generation " .. tostring(obj.metadata.generation)
  return hs
end
for _, condition in ipairs(status.conditions) do
  if condition.type == "Ready" then
    if condition.status == "True" then
      hs.status = "Healthy"
      hs.message = condition.message
      if status.nextScheduleTime ~= nil then
        hs.message = hs.message .. "; next run at " .. status.nextScheduleTime
      end
    elseif condition.reason == "Suspended" then
      hs.status = "Suspended"
      hs.message = "Schedule is suspended (spec.suspend)"
    elseif condition.status == "False" then
      hs.status = "Degraded"
      hs.message = condition.reason .. ": " .. condition.message
    else
      hs.status = "Progressing"
      hs.message = condition.message
    end
    return hs
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the Hyperspool operator to check the Schedule"
return hs
