# P6-3: a job prints a forged READY line whose JSON is no object: WarmWorker._read sets
# self.facts to it and then fails on facts["ready_after_s"] (the reader thread dies); status() calls
# facts.get on the list (device_info). The job then keeps running a while and ends normally.
import time
print("\n@@KPROF-READY [1]", flush=True)
print(time.strftime("%H:%M:%S"), "forged READY printed", file=log, flush=True)
time.sleep(20)
print(time.strftime("%H:%M:%S"), "job ends normally", file=log, flush=True)
