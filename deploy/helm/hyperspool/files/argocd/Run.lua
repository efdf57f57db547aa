-- A Hyperspool Run's health, from the status its operator writes (status.phase, status.awaiting).
-- A run that waits on a timer, a signal, an event or a lease is Progressing: it holds no pod, and
-- goes on by itself. One that waits for a person to answer an approval gate is Suspended: nothing
-- happens until someone runs `spool approve`. Cancelled is Degraded, not Suspended: it never resumes.
local hs = {}
local status = obj.status
if status == nil or status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Hyperspool operator to admit the run"
  return hs
end
local phase = status.phase
if phase == "Pending" or phase == "Running" then
  hs.status = "Progressing"
  hs.message = status.message or ("Run is " .. phase)
elseif phase == "Waiting" then
  local awaiting = status.awaiting or ""
  if string.sub(awaiting, 1, 9) == "approval " then
    hs.status = "Suspended"
    hs.message = "Waiting for a person to answer " .. awaiting .. " (spool approve)"
  else
    hs.status = "Progressing"
    hs.message = "Waiting for " .. awaiting
  end
elseif phase == "Succeeded" then
  hs.status = "Healthy"
  hs.message = status.message or "Run succeeded"
elseif phase == "Failed" then
  hs.status = "Degraded"
  hs.message = status.message or "Run failed"
elseif phase == "Cancelled" then
  hs.status = "Degraded"
  hs.message = status.message or "Run was cancelled"
else
  hs.status = "Unknown"
  hs.message = "Unknown phase " .. tostring(phase)
end
return hs
