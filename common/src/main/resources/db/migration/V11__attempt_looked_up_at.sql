-- When the reconciler last asked the provider about this attempt. It takes the least recently
-- asked first, so attempts the provider will never know cannot starve the ones it does.
ALTER TABLE attempt ADD COLUMN looked_up_at timestamptz;
