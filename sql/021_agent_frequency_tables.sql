-- The frequency tables each agent reported at registration (proto::DeviceFacts::tables, common/board_tables.hpp):
-- read from the board's sysfs, or the papers' BSP tables for a simulated board. The controller checks a
-- campaign's settings against the enrolled boards' tables and generates its power-mode grids from them (issue
-- 28). NULL: an agent that reports none (host backend, or an agent from before).
ALTER TABLE agents ADD COLUMN tables jsonb;
