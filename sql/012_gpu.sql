-- 012_gpu.sql: the GPUs of a machine, and what they did during each run.
--
-- A machine's GPUs are part of its hardware key (hw_key): a driver
-- update, another power limit or other clocks make another machine, whose
-- runs are never compared with the old one's.  The table below keeps the
-- fields the key was made of, so that a listing can say what changed.

CREATE TABLE machine_gpu (
  machine_id  INTEGER NOT NULL REFERENCES machine(id),
  slot        INTEGER NOT NULL,       -- order among the visible GPUs, from 0
  idx         INTEGER NOT NULL,       -- the GPU's index on the machine
  model       TEXT NOT NULL,          -- '' where NVML does not say
  uuid        TEXT NOT NULL,
  driver      TEXT NOT NULL,          -- kernel driver version
  cuda        TEXT NOT NULL,          -- CUDA version the driver supports
  vbios       TEXT NOT NULL,
  power_limit_mw INTEGER,             -- NULL: unknown
  persistence INTEGER,                -- 0 off, 1 on, NULL unknown
  mig         INTEGER,                -- MIG mode now
  ecc         INTEGER,                -- ECC mode now
  app_sm_mhz  INTEGER,                -- application clocks now
  app_mem_mhz INTEGER,
  default_sm_mhz INTEGER,             -- and by default
  default_mem_mhz INTEGER,
  clocks_locked INTEGER,              -- 1 locked or set, 0 not, NULL unknown
  PRIMARY KEY (machine_id, slot)
);

-- Per run, over the GPUs' readings at 10 Hz while the engine ran; all
-- NULL where the machine has no GPU state (never zeros).
ALTER TABLE run ADD COLUMN gpu_samples INTEGER;    -- readings taken
ALTER TABLE run ADD COLUMN gpu_sm_mhz REAL;        -- median SM clock
ALTER TABLE run ADD COLUMN gpu_mem_mhz REAL;       -- median memory clock
ALTER TABLE run ADD COLUMN gpu_temp_max_c INTEGER; -- highest temperature
ALTER TABLE run ADD COLUMN gpu_power_w REAL;       -- mean power, all GPUs
ALTER TABLE run ADD COLUMN gpu_util_pct REAL;      -- mean utilisation
ALTER TABLE run ADD COLUMN gpu_throttle INTEGER;   -- OR of NVML's reasons
ALTER TABLE run ADD COLUMN gpu_mem_peak INTEGER;   -- bytes above the baseline
ALTER TABLE run ADD COLUMN gpu_energy_j REAL;      -- energy counter difference
-- 1: the GPU throttled (thermal, power cap, HW slowdown) during the run.
ALTER TABLE run ADD COLUMN throttled INTEGER NOT NULL DEFAULT 0;
