-- wrk script: POST the recorded AdmissionReview named by $REVIEW to /validate on every request.
local path = os.getenv("REVIEW")
local file = assert(io.open(path, "rb"), "cannot open " .. tostring(path))
wrk.method = "POST"
wrk.body = file:read("*a")
wrk.headers["Content-Type"] = "application/json"
file:close()
