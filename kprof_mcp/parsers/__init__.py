"""Every reader of external tool output, pure and tested on recorded files: Nsight Compute
reports, logs and CSV (:mod:`.ncu`), Kineto traces (:mod:`.kineto`), ``nvidia-smi`` CSV
(:mod:`.nvidia_smi`) and Triton's compiled-kernel metadata (:mod:`.triton`)."""
