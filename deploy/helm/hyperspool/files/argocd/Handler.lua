-- A Hyperspool Handler's health, from its Ready condition: whether it starts runs for its event
-- (its Workflow exists and has a script). Not Ready is Degraded, with the operator's reason
-- (WorkflowNotFound, ConfigMapNotFound) and message: events of its type start nothing meanwhile.
local hs = {}
local status = obj.status
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Hyperspool operator to check the Handler"
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
      hs.message = condition.message .. " on each " .. obj.spec.event .. " event"
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
hs.message = "Waiting for the Hyperspool operator to check the Handler"
return hs
