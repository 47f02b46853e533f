// The configuration keys of the SPA release on RAGEN v1 + verl, as data: every leaf key (dotted
// path) of the composed PPO config and of the SFT trainer config. Written from the sources read at
// shiqichen17/SPA 3848e68 (config/base.yaml over config/ppo_trainer.yaml, the verl trainer config
// RAGEN 5eb79b8 ships; sft/config/sft_trainer.yaml) and RAGEN-AI/RAGEN 5eb79b8 (config/envs.yaml,
// ragen/env/sokoban/config.py, ragen/env/frozen_lake/config.py). The exporter checks the Hydra file
// and the launch overrides it writes against these lists, so a key RAGEN does not know never
// reaches a cluster job (Hydra would refuse it there, after the queue wait).

/** Leaf keys of the composed PPO config (SPA config/base.yaml + ppo_trainer.yaml), 237 keys. */
export const RAGEN_PPO_KEYS: readonly string[] = [
  'actor_rollout_ref.actor.checkpoint.contents', 'actor_rollout_ref.actor.clip_ratio', 'actor_rollout_ref.actor.clip_ratio_c',
  'actor_rollout_ref.actor.clip_ratio_high', 'actor_rollout_ref.actor.clip_ratio_low', 'actor_rollout_ref.actor.entropy_coeff',
  'actor_rollout_ref.actor.fsdp_config.fsdp_size', 'actor_rollout_ref.actor.fsdp_config.offload_policy',
  'actor_rollout_ref.actor.fsdp_config.optimizer_offload', 'actor_rollout_ref.actor.fsdp_config.param_offload',
  'actor_rollout_ref.actor.fsdp_config.reshard_after_forward', 'actor_rollout_ref.actor.fsdp_config.wrap_policy.min_num_params',
  'actor_rollout_ref.actor.grad_clip', 'actor_rollout_ref.actor.kl_loss_coef', 'actor_rollout_ref.actor.kl_loss_type',
  'actor_rollout_ref.actor.loss_agg_mode', 'actor_rollout_ref.actor.micro_batch_size_per_gpu', 'actor_rollout_ref.actor.mode',
  'actor_rollout_ref.actor.optim.betas', 'actor_rollout_ref.actor.optim.lr', 'actor_rollout_ref.actor.optim.lr_warmup_steps',
  'actor_rollout_ref.actor.optim.lr_warmup_steps_ratio', 'actor_rollout_ref.actor.optim.min_lr_ratio',
  'actor_rollout_ref.actor.optim.total_training_steps', 'actor_rollout_ref.actor.optim.warmup_style', 'actor_rollout_ref.actor.optim.weight_decay',
  'actor_rollout_ref.actor.ppo_epochs', 'actor_rollout_ref.actor.ppo_max_token_len_per_gpu', 'actor_rollout_ref.actor.ppo_micro_batch_size',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', 'actor_rollout_ref.actor.ppo_mini_batch_size', 'actor_rollout_ref.actor.shuffle',
  'actor_rollout_ref.actor.strategy', 'actor_rollout_ref.actor.ulysses_sequence_parallel_size', 'actor_rollout_ref.actor.use_dynamic_bsz',
  'actor_rollout_ref.actor.use_kl_loss', 'actor_rollout_ref.actor.use_ref', 'actor_rollout_ref.actor.use_torch_compile',
  'actor_rollout_ref.hybrid_engine', 'actor_rollout_ref.model.enable_gradient_checkpointing', 'actor_rollout_ref.model.external_lib',
  'actor_rollout_ref.model.override_config', 'actor_rollout_ref.model.path', 'actor_rollout_ref.model.use_liger',
  'actor_rollout_ref.model.use_remove_padding', 'actor_rollout_ref.ref.fsdp_config.param_offload',
  'actor_rollout_ref.ref.fsdp_config.reshard_after_forward', 'actor_rollout_ref.ref.fsdp_config.wrap_policy.min_num_params',
  'actor_rollout_ref.ref.log_prob_max_token_len_per_gpu', 'actor_rollout_ref.ref.log_prob_micro_batch_size',
  'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', 'actor_rollout_ref.ref.log_prob_use_dynamic_bsz', 'actor_rollout_ref.ref.mode',
  'actor_rollout_ref.ref.strategy', 'actor_rollout_ref.ref.ulysses_sequence_parallel_size', 'actor_rollout_ref.ref.use_torch_compile',
  'actor_rollout_ref.rollout.chat_scheduler', 'actor_rollout_ref.rollout.disable_log_stats', 'actor_rollout_ref.rollout.do_sample',
  'actor_rollout_ref.rollout.dtype', 'actor_rollout_ref.rollout.enable_chunked_prefill', 'actor_rollout_ref.rollout.enforce_eager',
  'actor_rollout_ref.rollout.engine_kwargs.swap_space', 'actor_rollout_ref.rollout.free_cache_engine',
  'actor_rollout_ref.rollout.gpu_memory_utilization', 'actor_rollout_ref.rollout.ignore_eos', 'actor_rollout_ref.rollout.load_format',
  'actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu', 'actor_rollout_ref.rollout.log_prob_micro_batch_size',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', 'actor_rollout_ref.rollout.log_prob_use_dynamic_bsz',
  'actor_rollout_ref.rollout.max_model_len', 'actor_rollout_ref.rollout.max_num_batched_tokens', 'actor_rollout_ref.rollout.max_num_seqs',
  'actor_rollout_ref.rollout.mode', 'actor_rollout_ref.rollout.multi_turn.enable', 'actor_rollout_ref.rollout.multi_turn.format',
  'actor_rollout_ref.rollout.multi_turn.max_turns', 'actor_rollout_ref.rollout.multi_turn.tool_config_path', 'actor_rollout_ref.rollout.n',
  'actor_rollout_ref.rollout.name', 'actor_rollout_ref.rollout.prompt_length', 'actor_rollout_ref.rollout.response_length',
  'actor_rollout_ref.rollout.rollout_filter_ratio', 'actor_rollout_ref.rollout.rollout_filter_type', 'actor_rollout_ref.rollout.temperature',
  'actor_rollout_ref.rollout.tensor_model_parallel_size', 'actor_rollout_ref.rollout.top_k', 'actor_rollout_ref.rollout.top_p',
  'actor_rollout_ref.rollout.use_fire_sampling', 'actor_rollout_ref.rollout.val_kwargs.do_sample', 'actor_rollout_ref.rollout.val_kwargs.n',
  'actor_rollout_ref.rollout.val_kwargs.temperature', 'actor_rollout_ref.rollout.val_kwargs.top_k', 'actor_rollout_ref.rollout.val_kwargs.top_p',
  'agent_proxy.action_sep', 'agent_proxy.enable_think', 'agent_proxy.max_actions_per_turn', 'agent_proxy.max_turn',
  'agent_proxy.reward_normalization.grouping', 'agent_proxy.reward_normalization.method', 'agent_proxy.use_turn_scores', 'algorithm.adv_estimator',
  'algorithm.gamma', 'algorithm.high_level_gamma', 'algorithm.kl_ctrl.horizon', 'algorithm.kl_ctrl.kl_coef', 'algorithm.kl_ctrl.target_kl',
  'algorithm.kl_ctrl.type', 'algorithm.kl_penalty', 'algorithm.lam', 'algorithm.norm_adv_by_std_in_grpo', 'algorithm.use_kl_in_reward',
  'critic.checkpoint.contents', 'critic.cliprange_value', 'critic.forward_max_token_len_per_gpu', 'critic.forward_micro_batch_size',
  'critic.forward_micro_batch_size_per_gpu', 'critic.grad_clip', 'critic.mode', 'critic.model.enable_gradient_checkpointing',
  'critic.model.external_lib', 'critic.model.fsdp_config.fsdp_size', 'critic.model.fsdp_config.offload_policy',
  'critic.model.fsdp_config.optimizer_offload', 'critic.model.fsdp_config.param_offload', 'critic.model.fsdp_config.reshard_after_forward',
  'critic.model.fsdp_config.wrap_policy.min_num_params', 'critic.model.override_config', 'critic.model.path', 'critic.model.tokenizer_path',
  'critic.model.use_remove_padding', 'critic.optim.betas', 'critic.optim.lr', 'critic.optim.lr_warmup_steps_ratio', 'critic.optim.min_lr_ratio',
  'critic.optim.total_training_steps', 'critic.optim.warmup_style', 'critic.optim.weight_decay', 'critic.ppo_epochs',
  'critic.ppo_max_token_len_per_gpu', 'critic.ppo_micro_batch_size', 'critic.ppo_micro_batch_size_per_gpu', 'critic.ppo_mini_batch_size',
  'critic.rollout_n', 'critic.shuffle', 'critic.strategy', 'critic.ulysses_sequence_parallel_size', 'critic.use_dynamic_bsz',
  'ctx_manager.generation.gen_config.kwargs', 'ctx_manager.generation.gen_config.response_length', 'ctx_manager.generation.gen_config.temperature',
  'ctx_manager.generation.gen_config.top_k', 'ctx_manager.generation.gen_config.top_p', 'ctx_manager.mode', 'custom_reward_function.name',
  'custom_reward_function.path', 'data.custom_cls.name', 'data.custom_cls.path', 'data.filter_overlong_prompts',
  'data.filter_overlong_prompts_workers', 'data.image_key', 'data.max_prompt_length', 'data.max_response_length', 'data.prompt_key',
  'data.return_raw_chat', 'data.return_raw_input_ids', 'data.reward_fn_key', 'data.shuffle', 'data.tokenizer', 'data.train_batch_size',
  'data.train_files', 'data.truncation', 'data.val_batch_size', 'data.val_files', 'data.video_key', 'enable_response_mask',
  'es_manager.format_penalty', 'es_manager.train.env_configs.n_groups', 'es_manager.train.env_configs.tags', 'es_manager.train.env_groups',
  'es_manager.train.group_size', 'es_manager.val.env_configs.n_groups', 'es_manager.val.env_configs.tags', 'es_manager.val.env_groups',
  'es_manager.val.group_size', 'micro_batch_size_per_gpu', 'model_path', 'ppo_mini_batch_size', 'ray_init.num_cpus', 'reward_model.enable',
  'reward_model.forward_max_token_len_per_gpu', 'reward_model.launch_reward_fn_async', 'reward_model.max_length', 'reward_model.micro_batch_size',
  'reward_model.micro_batch_size_per_gpu', 'reward_model.model.external_lib', 'reward_model.model.fsdp_config.fsdp_size',
  'reward_model.model.fsdp_config.param_offload', 'reward_model.model.fsdp_config.reshard_after_forward',
  'reward_model.model.fsdp_config.wrap_policy.min_num_params', 'reward_model.model.input_tokenizer', 'reward_model.model.path',
  'reward_model.model.use_remove_padding', 'reward_model.reward_manager', 'reward_model.strategy', 'reward_model.ulysses_sequence_parallel_size',
  'reward_model.use_dynamic_bsz', 'seed.train', 'seed.val', 'system.CUDA_VISIBLE_DEVICES', 'trainer.balance_batch', 'trainer.critic_warmup',
  'trainer.default_hdfs_dir', 'trainer.default_local_dir', 'trainer.del_local_ckpt_after_load', 'trainer.experiment_name',
  'trainer.generations_to_log_to_wandb.train', 'trainer.generations_to_log_to_wandb.val', 'trainer.log_val_generations', 'trainer.logger',
  'trainer.max_actor_ckpt_to_keep', 'trainer.max_critic_ckpt_to_keep', 'trainer.n_gpus_per_node', 'trainer.nnodes', 'trainer.project_name',
  'trainer.ray_wait_register_center_timeout', 'trainer.resume_from_path', 'trainer.resume_mode', 'trainer.rollout_data_dir', 'trainer.save_freq',
  'trainer.test_freq', 'trainer.total_epochs', 'trainer.total_training_steps', 'trainer.val_before_train', 'trainer.validation_data_dir',
  'trainer.validation_steps',
];

/** Leaf keys of SPA's SFT trainer config (sft/config/sft_trainer.yaml), 45 keys. */
export const SPA_SFT_KEYS: readonly string[] = [
  'data.balance_dp_token', 'data.chat_template', 'data.custom_cls.name', 'data.custom_cls.path', 'data.max_length', 'data.micro_batch_size',
  'data.micro_batch_size_per_gpu', 'data.multiturn.enable', 'data.multiturn.messages_key', 'data.prompt_dict_keys', 'data.prompt_key',
  'data.response_dict_keys', 'data.response_key', 'data.train_batch_size', 'data.train_files', 'data.truncation', 'data.val_files',
  'model.enable_gradient_checkpointing', 'model.external_lib', 'model.fsdp_config.cpu_offload', 'model.fsdp_config.offload_params',
  'model.fsdp_config.wrap_policy.min_num_params', 'model.lora_alpha', 'model.lora_rank', 'model.partial_pretrain', 'model.target_modules',
  'model.trust_remote_code', 'model.use_liger', 'optim.betas', 'optim.clip_grad', 'optim.lr', 'optim.lr_scheduler', 'optim.warmup_steps_ratio',
  'optim.weight_decay', 'trainer.default_hdfs_dir', 'trainer.default_local_dir', 'trainer.experiment_name', 'trainer.logger', 'trainer.project_name',
  'trainer.resume_path', 'trainer.seed', 'trainer.total_epochs', 'trainer.total_training_steps', 'ulysses_sequence_parallel_size',
  'use_remove_padding',
];

/** Keys of one custom_envs.<Tag> entry (config/envs.yaml). */
export const RAGEN_CUSTOM_ENV_KEYS: readonly string[] = [
  'env_type', 'max_actions_per_traj', 'env_instruction', 'env_instruction_add_worldmodel', 'max_tokens', 'env_config',
];

/** Fields of RAGEN's env config dataclasses, per env_type (the exported envs add `state_format`). */
export const RAGEN_ENV_CONFIG_KEYS: Readonly<Record<string, readonly string[]>> = {
  sokoban: ['dim_room', 'max_steps', 'num_boxes', 'search_depth', 'grid_lookup', 'grid_vocab', 'action_lookup', 'dim_x', 'dim_y', 'render_mode'],
  frozen_lake: ['size', 'p', 'is_slippery', 'map_seed', 'render_mode', 'action_map', 'map_lookup', 'grid_lookup', 'grid_vocab', 'action_lookup'],
};

const PPO_SET = new Set(RAGEN_PPO_KEYS);
const SFT_SET = new Set(SPA_SFT_KEYS);

/** Whether a dotted key is a PPO config key (or lies under a leaf that holds a free map such as override_config). */
export function isRagenPpoKey(key: string): boolean {
  if (PPO_SET.has(key)) return true;
  for (let i = key.lastIndexOf('.'); i > 0; i = key.lastIndexOf('.', i - 1)) if (PPO_SET.has(key.slice(0, i))) return true;
  return false;
}

/** Whether a dotted key is an SFT trainer key. */
export function isSpaSftKey(key: string): boolean {
  return SFT_SET.has(key);
}
